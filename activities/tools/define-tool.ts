/**
 * Tools written by the user (issue 26): `defineTool({ name, description, parameters, run })` makes an
 * {@link AgentTool} that `createWorker({ tools })` registers beside the built-in ones. The model sees
 * it as an OpenAI function tool whose parameters are the JSON schema given, or converted from a zod
 * schema. Each call runs inside the `runTool` activity under the rules the built-in tools follow:
 *
 * - its arguments are checked against the schema before `run` is called; arguments that do not fit
 *   are a tool error the model reads (`Error: invalid arguments: …`), and `run` is not called;
 * - a call that outlasts `timeoutMs` is a tool error (its `signal` is aborted so `run` can stop);
 * - a {@link ToolError} thrown by `run` is a tool error at once; any other error is retried with the
 *   activity (3 attempts), and the last one's message is the tool error;
 * - the result is capped at `maxOutputChars` characters, with a line telling the model so.
 *
 * A tool error is the call's result, never a failed workflow: the conversation goes on.
 */
import { z } from 'zod';
import { MAX_READ_CHARS } from './builtin';
import { assertToolName, ToolError, type AgentTool, type ToolContext, type ToolOutput } from './registry';

/** A call's time limit when the tool sets none. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/**
 * The longest `timeoutMs` accepted: under the 5 minutes the `runTool` activity may run
 * (workflows/agent-conversation.ts), so the tool's own limit fires first and the model reads an
 * error, instead of the activity timing out and being retried.
 */
export const MAX_TOOL_TIMEOUT_MS = 240_000;
/** A result's length cap when the tool sets none: read_file's. */
export const DEFAULT_MAX_OUTPUT_CHARS = MAX_READ_CHARS;

/** What `run` gets besides its arguments. */
export interface ToolCallContext extends ToolContext {
  /** Aborted when the call times out or is cancelled: pass it to `fetch` and the like. */
  signal: AbortSignal;
}

/** A JSON schema (an object: `{ type: 'object', properties: {...}, required: [...] }`). */
export type JsonSchema = Record<string, unknown>;

/** What a tool returns: text as is; anything else is sent to the model as JSON. */
export type ToolResultValue = string | object;

interface ToolSpecBase {
  /** The function name the model calls: 1–64 letters, digits, `_` or `-`; not a built-in tool's. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** A call's time limit. Default {@link DEFAULT_TOOL_TIMEOUT_MS}, at most {@link MAX_TOOL_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Characters of the result the model gets at most. Default {@link DEFAULT_MAX_OUTPUT_CHARS}. */
  maxOutputChars?: number;
}

/** A tool whose parameters are a zod (v4) schema: `run` gets the parsed arguments. */
export interface ZodToolSpec<S extends z.ZodType> extends ToolSpecBase {
  parameters: S;
  run(args: z.output<S>, ctx: ToolCallContext): Promise<ToolResultValue> | ToolResultValue;
}

/** A tool whose parameters are a JSON schema: `run` gets the arguments once they fit it. */
export interface JsonSchemaToolSpec extends ToolSpecBase {
  parameters: JsonSchema;
  run(args: Record<string, unknown>, ctx: ToolCallContext): Promise<ToolResultValue> | ToolResultValue;
}

export type ToolSpec = ZodToolSpec<z.ZodType> | JsonSchemaToolSpec;

/** A tool made by {@link defineTool}: an {@link AgentTool} with its limits. */
export interface DefinedTool extends AgentTool {
  readonly timeoutMs: number;
  readonly maxOutputChars: number;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/** A zod 3 schema has `_def` but not zod 4's `_zod`. */
function isZod3Schema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '_def' in value && !('_zod' in value);
}

function positiveInt(name: string, field: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value <= 0 || value > max) {
    throw new RangeError(
      `tool ${JSON.stringify(name)}: ${field} must be a whole number from 1 to ${max}, got ${value}`,
    );
  }
  return value;
}

/** The schema the model sees and the schema the arguments are checked against. */
function schemas(name: string, parameters: unknown): { jsonSchema: JsonSchema; validator: z.ZodType } {
  const where = `tool ${JSON.stringify(name)}`;
  if (isZod3Schema(parameters)) {
    throw new TypeError(
      `${where}: parameters is a zod 3 schema; use zod 4 (\`import { z } from 'zod'\`, zod ≥ 4)`,
    );
  }
  let jsonSchema: JsonSchema;
  let validator: z.ZodType;
  if (isZodSchema(parameters)) {
    validator = parameters;
    try {
      // The model writes the input side of the schema (before defaults and transforms apply).
      jsonSchema = z.toJSONSchema(parameters, { io: 'input', unrepresentable: 'throw' }) as JsonSchema;
    } catch (err) {
      throw new TypeError(
        `${where}: parameters cannot be written as JSON schema (${(err as Error).message})`,
        {
          cause: err,
        },
      );
    }
    delete jsonSchema.$schema;
  } else if (typeof parameters === 'object' && parameters !== null && !Array.isArray(parameters)) {
    jsonSchema = parameters as JsonSchema;
    try {
      validator = z.fromJSONSchema(jsonSchema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      throw new TypeError(
        `${where}: parameters is not a JSON schema zod can check (${(err as Error).message})`,
        {
          cause: err,
        },
      );
    }
  } else {
    throw new TypeError(`${where}: parameters must be a zod schema or a JSON schema object`);
  }
  // OpenAI function tools take named arguments: an object.
  if (jsonSchema.type !== 'object') {
    throw new TypeError(
      `${where}: parameters must describe an object (z.object(...) or { type: 'object', ... }), got type ${JSON.stringify(jsonSchema.type)}`,
    );
  }
  return { jsonSchema, validator };
}

/** Each issue as `path: message`, on one line (the model reads it as the tool's result). */
function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
}

/** The result as the model reads it. */
function resultText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new ToolError(`the tool's result cannot be sent as JSON (${(err as Error).message})`);
  }
  return text ?? String(value);
}

/**
 * `text` cut to `max` characters (never between the halves of a surrogate pair), with a line saying
 * how long it was.
 */
export function capOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  const code = text.charCodeAt(max - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  return `${text.slice(0, end)}\n[cut at ${max} characters: the tool returned ${text.length}]`;
}

/**
 * A tool of your own for `createWorker({ tools })`.
 *
 * ```ts
 * const weather = defineTool({
 *   name: 'get_weather',
 *   description: 'The weather in a city today.',
 *   parameters: z.object({ city: z.string().describe('City name') }),
 *   run: async ({ city }, { signal }) => (await fetch(`https://wttr.in/${city}?format=3`, { signal })).text(),
 *   timeoutMs: 10_000,
 * });
 * ```
 *
 * @throws at definition (so at worker start, never during a conversation): an invalid name, a
 *   schema that is not an object or cannot be converted, a limit out of range
 */
export function defineTool<S extends z.ZodType>(spec: ZodToolSpec<S>): DefinedTool;
export function defineTool(spec: JsonSchemaToolSpec): DefinedTool;
export function defineTool(spec: ToolSpec): DefinedTool {
  assertToolName(spec.name);
  const name = spec.name;
  if (typeof spec.description !== 'string') {
    throw new TypeError(`tool ${JSON.stringify(name)}: description must be a string`);
  }
  if (typeof spec.run !== 'function')
    throw new TypeError(`tool ${JSON.stringify(name)}: run must be a function`);
  const timeoutMs = positiveInt(
    name,
    'timeoutMs',
    spec.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    MAX_TOOL_TIMEOUT_MS,
  );
  const maxOutputChars = positiveInt(
    name,
    'maxOutputChars',
    spec.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
    Number.MAX_SAFE_INTEGER,
  );
  const { jsonSchema, validator } = schemas(name, spec.parameters);
  const run = spec.run as (args: unknown, ctx: ToolCallContext) => Promise<ToolResultValue> | ToolResultValue;

  return {
    name,
    description: spec.description,
    parameters: jsonSchema,
    timeoutMs,
    maxOutputChars,
    async run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput> {
      const parsed = validator.safeParse(args);
      if (!parsed.success) throw new ToolError(`invalid arguments: ${describeIssues(parsed.error)}`);
      const timer = new AbortController();
      const signal = ctx.signal ? AbortSignal.any([ctx.signal, timer.signal]) : timer.signal;
      let timeout: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timeout = setTimeout(() => {
          const error = new ToolError(`the tool did not finish within ${timeoutMs} ms`);
          timer.abort(error);
          reject(error);
        }, timeoutMs);
      });
      try {
        // A `run` that ignores its signal goes on in the background; its result is not waited for.
        const value = await Promise.race([
          Promise.resolve().then(() => run(parsed.data, { ...ctx, signal })),
          timedOut,
        ]);
        return { content: capOutput(resultText(value), maxOutputChars) };
      } finally {
        clearTimeout(timeout);
      }
    },
  };
}
