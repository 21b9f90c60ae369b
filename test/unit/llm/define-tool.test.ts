/**
 * `defineTool` (issue 26 item 3): the schema the model sees, arguments checked before `run`, the
 * timeout, the output cap, and the names a user tool cannot take. The same tools through a real
 * conversation: test/integration/conversation/user-tools.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { toolRegistry } from '../../../activities';
import {
  capOutput,
  DEFAULT_MAX_OUTPUT_CHARS,
  DEFAULT_TOOL_TIMEOUT_MS,
  defineTool,
  MAX_TOOL_TIMEOUT_MS,
} from '../../../activities/tools/define-tool';
import { ToolError } from '../../../activities/tools/registry';

const ctx = { conversationId: 'c', round: 1, workspace: null };

const weather = defineTool({
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: z.object({
    city: z.string().min(1).describe('City name'),
    days: z.number().int().min(1).max(7).default(1),
  }),
  run: async ({ city, days }) => ({ city, days, sky: 'clear' }),
});

describe('the schema the model sees', () => {
  it('a zod schema becomes the JSON schema of its input (extra keys are stripped, not refused), without $schema', () => {
    expect(weather.parameters).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', minLength: 1, description: 'City name' },
        days: { type: 'integer', minimum: 1, maximum: 7, default: 1 },
      },
      required: ['city'],
    });
    expect(weather.timeoutMs).toBe(DEFAULT_TOOL_TIMEOUT_MS);
    expect(weather.maxOutputChars).toBe(DEFAULT_MAX_OUTPUT_CHARS);
  });

  it('a JSON schema is sent as given', () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    expect(defineTool({ name: 'search', description: 'd', parameters, run: () => 'x' }).parameters).toBe(
      parameters,
    );
  });
});

describe('arguments are checked before run', () => {
  it('run gets the parsed arguments (defaults applied); an object result is sent as JSON', async () => {
    expect(await weather.run({ city: 'Oslo' }, ctx)).toEqual({
      content: '{"city":"Oslo","days":1,"sky":"clear"}',
    });
  });

  it.each([
    ['a missing field', {}, /^invalid arguments: city: Invalid input: expected string, received undefined$/],
    ['a wrong type', { city: 'Oslo', days: 'two' }, /days: Invalid input: expected number, received string/],
    ['a value out of range', { city: 'Oslo', days: 9 }, /days: Too big: expected number to be <=7/],
    ['an unknown field', { city: 'Oslo', wind: true }, /\(arguments\): Unrecognized key: "wind"/],
  ])('zod: %s is a ToolError and run is not called', async (_case, args, message) => {
    const run = vi.fn(async () => 'ran');
    const tool = defineTool({
      name: 't',
      description: 'd',
      parameters: z.strictObject({ city: z.string(), days: z.number().max(7).optional() }),
      run,
    });
    const error = await tool.run(args, ctx).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as Error).message).toMatch(message);
    expect(run).not.toHaveBeenCalled();
  });

  it('JSON schema: arguments that do not fit are a ToolError naming the field', async () => {
    const run = vi.fn(() => 'ran');
    const tool = defineTool({
      name: 'search',
      description: 'd',
      parameters: {
        type: 'object',
        properties: { q: { type: 'string' }, n: { type: 'integer', minimum: 1 } },
        required: ['q'],
      },
      run,
    });
    await expect(tool.run({ n: 0 }, ctx)).rejects.toThrow(/^invalid arguments: q: .*; n: Too small/);
    expect(run).not.toHaveBeenCalled();
    expect(await tool.run({ q: 'x', n: 2 }, ctx)).toEqual({ content: 'ran' });
  });
});

describe('limits', () => {
  it('a call past its timeout is a ToolError, and its signal is aborted', async () => {
    let seen: AbortSignal | undefined;
    const tool = defineTool({
      name: 'slow',
      description: 'd',
      parameters: z.object({}),
      timeoutMs: 50,
      run: (_args, { signal }) => {
        seen = signal;
        return new Promise<string>(() => undefined);
      },
    });
    await expect(tool.run({}, ctx)).rejects.toThrow(new ToolError('the tool did not finish within 50 ms'));
    expect(seen?.aborted).toBe(true);
  });

  it("the call's own signal reaches run", async () => {
    const controller = new AbortController();
    const tool = defineTool({
      name: 'cancellable',
      description: 'd',
      parameters: z.object({}),
      run: (_args, { signal }) =>
        new Promise<string>((resolve) => {
          if (signal.aborted) resolve('stopped');
          signal.addEventListener('abort', () => resolve('stopped'));
        }),
    });
    const result = tool.run({}, { ...ctx, signal: controller.signal });
    controller.abort();
    expect(await result).toEqual({ content: 'stopped' });
  });

  it('a result over maxOutputChars is cut, with a line saying so', async () => {
    const tool = defineTool({
      name: 'loud',
      description: 'd',
      parameters: z.object({}),
      maxOutputChars: 10,
      run: () => 'x'.repeat(25),
    });
    expect((await tool.run({}, ctx)).content).toBe(
      `${'x'.repeat(10)}\n[cut at 10 characters: the tool returned 25]`,
    );
  });

  it('a cut never splits a surrogate pair', () => {
    expect(capOutput('abc🙂def', 4)).toBe('abc\n[cut at 4 characters: the tool returned 8]');
    expect(capOutput('short', 10)).toBe('short');
  });

  it('errors of run pass through: a ToolError as it is, anything else for the activity to retry', async () => {
    const failing = (error: Error) =>
      defineTool({ name: 'f', description: 'd', parameters: z.object({}), run: () => Promise.reject(error) });
    await expect(failing(new ToolError('no such city')).run({}, ctx)).rejects.toThrow(ToolError);
    const plain = await failing(new Error('boom'))
      .run({}, ctx)
      .catch((err: unknown) => err);
    expect(plain).not.toBeInstanceOf(ToolError);
    expect((plain as Error).message).toBe('boom');
  });
});

describe('refused at definition', () => {
  const base = { description: 'd', run: () => 'x' };
  it.each([
    [
      'a name the API refuses',
      { ...base, name: 'get weather', parameters: z.object({}) },
      /invalid tool name "get weather"/,
    ],
    [
      'a schema that is not an object',
      { ...base, name: 't', parameters: z.string() },
      /parameters must describe an object .* got type "string"/,
    ],
    [
      'a JSON schema that is not an object',
      { ...base, name: 't', parameters: { type: 'array' } },
      /got type "array"/,
    ],
    ['a zod 3 schema', { ...base, name: 't', parameters: { _def: {}, parse: () => 0 } }, /zod 3 schema/],
    [
      'a type JSON schema cannot hold',
      { ...base, name: 't', parameters: z.object({ at: z.date() }) },
      /cannot be written as JSON schema/,
    ],
    [
      'a timeout of 0',
      { ...base, name: 't', parameters: z.object({}), timeoutMs: 0 },
      /timeoutMs must be a whole number from 1 to 240000, got 0/,
    ],
    [
      'a timeout past the activity',
      { ...base, name: 't', parameters: z.object({}), timeoutMs: MAX_TOOL_TIMEOUT_MS + 1 },
      /timeoutMs must be/,
    ],
    [
      'a fractional cap',
      { ...base, name: 't', parameters: z.object({}), maxOutputChars: 1.5 },
      /maxOutputChars must be a whole number/,
    ],
  ])('%s', (_case, spec, message) => {
    expect(() => defineTool(spec as Parameters<typeof defineTool>[0])).toThrow(message);
  });
});

describe('names a user tool cannot take', () => {
  const named = (name: string) =>
    defineTool({ name, description: 'd', parameters: z.object({}), run: () => 'x' });
  it.each(['read_file', 'write_file', 'remember', 'recall'])('%s is a built-in tool', (name) => {
    expect(() => toolRegistry([named(name)])).toThrow(
      new RegExp(`tool name "${name}" is a built-in tool's .*: give your tool another name`),
    );
  });

  it('two tools of one name', () => {
    expect(() => toolRegistry([named('lookup'), named('lookup')])).toThrow(
      'tool name "lookup" is registered twice: give each tool its own name',
    );
  });

  it('distinct names register beside the built-ins', () => {
    expect(toolRegistry([named('lookup'), named('fetch_page')]).names()).toEqual(
      expect.arrayContaining(['read_file', 'lookup', 'fetch_page']),
    );
  });
});
