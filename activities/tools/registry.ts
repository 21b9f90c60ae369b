/**
 * Tools the agent can call. A tool runs inside the `runTool` activity, which reads its arguments
 * from the store and appends its result, so tool bodies never pass through workflow history.
 * Users register their own tools with `createWorker({ tools: [...] })`, most simply made with
 * `defineTool` (define-tool.ts: arguments checked against a schema, a timeout, an output cap).
 */
import type { ToolDefinition } from '../../src/context/items';

export interface ToolContext {
  conversationId: string;
  round: number;
  /** The workspace directory given at start, or null when the conversation has none. */
  workspace: string | null;
  /** Aborted when the tool call is cancelled (its activity is); absent where a caller has none. */
  signal?: AbortSignal;
}

/** A note the tool asks to add to the header (seed 001: memories, the task list, pinned content). */
export interface ToolNote {
  kind: 'memory' | 'task_list' | 'pin';
  text: string;
}

export interface ToolOutput {
  /** What the model reads as the tool result. */
  content: string;
  isError?: boolean;
  notes?: ToolNote[];
}

export interface AgentTool {
  name: string;
  description: string;
  /** JSON schema of the arguments. */
  parameters: Record<string, unknown>;
  run(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>;
}

/** An error the model can read (bad arguments, a path outside the workspace...). */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}

export function toolDefinition(tool: AgentTool): ToolDefinition {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  };
}

/**
 * Refuses a name the OpenAI API would refuse for a function tool.
 * @throws Error naming the rule
 */
export function assertToolName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
    throw new Error(`invalid tool name ${JSON.stringify(name)}: use 1–64 letters, digits, '_' or '-'`);
  }
}

export class ToolRegistry {
  private readonly tools = new Map<string, AgentTool>();

  constructor(tools: AgentTool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  /**
   * Adds a tool. A name already registered is refused: the model would see two tools of one name,
   * and only one of them would ever run.
   * @throws Error for an invalid or a taken name
   */
  register(tool: AgentTool): void {
    assertToolName(tool.name);
    if (this.tools.has(tool.name)) {
      throw new Error(
        `tool name ${JSON.stringify(tool.name)} is registered twice: give each tool its own name`,
      );
    }
    this.tools.set(tool.name, tool);
  }

  get(name: string): AgentTool | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Definitions of the named tools, in the order asked; unknown names are refused. */
  definitions(names: string[]): ToolDefinition[] {
    return names.map((name) => {
      const tool = this.tools.get(name);
      if (!tool)
        throw new Error(`unknown tool ${JSON.stringify(name)}; known tools: ${this.names().join(', ')}`);
      return toolDefinition(tool);
    });
  }
}
