/**
 * Recorded sessions as a model: the assistant turns and tool results of an imported session
 * (OpenAI chat, SWE-agent `.traj`, pi JSONL), played back through the same workflow so that real
 * sessions run offline — for tests, for `npm start` without an LLM, and for trying compaction
 * settings on past sessions.
 */
import { finalFailure } from '../src/failures';
import { readFile } from 'node:fs/promises';
import type { AssistantMessage, ContextItem } from '../src/context/items';
import { messageText } from '../src/context/items';

/** One recorded session, indexed by round (a round starts at a real user message). */
export class Recording {
  /** rounds[r - 1] = the assistant messages of round r, in order. */
  private readonly rounds: AssistantMessage[][] = [];
  private readonly toolResults = new Map<string, string>();
  /** The real user messages, in order (what a driver sends, one per round). */
  readonly userMessages: string[] = [];
  /** The system prompt of the session, if it has one. */
  readonly systemPrompt: string | null;

  constructor(items: ContextItem[]) {
    let system: string | null = null;
    for (const item of items) {
      switch (item.type) {
        case 'SYSTEM_PROMPT':
          system ??= messageText(item.message);
          break;
        case 'USER_MESSAGE':
          if (item.isMeta) break;
          this.userMessages.push(messageText(item.message));
          this.rounds.push([]);
          break;
        case 'ASSISTANT_MESSAGE': {
          if (this.rounds.length === 0) {
            // An assistant turn before any user message belongs to round 1.
            this.userMessages.push('(session start)');
            this.rounds.push([]);
          }
          const { reasoning_content: _reasoning, ...message } = item.message;
          this.rounds[this.rounds.length - 1]?.push(message);
          break;
        }
        case 'TOOL_RESULT':
          this.toolResults.set(item.message.tool_call_id, messageText(item.message));
          break;
        default:
          break;
      }
    }
    this.systemPrompt = system;
  }

  get roundCount(): number {
    return this.rounds.length;
  }

  /** Step `step` (0-based) of round `round` (1-based), or null when the round has no more turns. */
  assistantTurn(round: number, step: number): AssistantMessage | null {
    return this.rounds[round - 1]?.[step] ?? null;
  }

  toolResult(toolCallId: string): string | null {
    return this.toolResults.get(toolCallId) ?? null;
  }
}

export type SessionImporter = (text: string, fileName: string) => ContextItem[];

/** Loads and caches recordings by path (the worker's view of the file). */
export class RecordingLibrary {
  private readonly cache = new Map<string, Promise<Recording>>();

  constructor(private readonly importer: SessionImporter) {}

  load(path: string | undefined): Promise<Recording> {
    if (!path) {
      throw finalFailure('RECORDING_INVALID', 'the recorded model needs recordingPath');
    }
    let recording = this.cache.get(path);
    if (!recording) {
      recording = readFile(path, 'utf8').then(
        (text) => {
          try {
            return new Recording(this.importer(text, path));
          } catch (err) {
            throw finalFailure(
              'RECORDING_INVALID',
              `cannot read recording ${path}: ${(err as Error).message}`,
            );
          }
        },
        (err: Error) => {
          throw finalFailure('RECORDING_INVALID', `cannot read recording ${path}: ${err.message}`);
        },
      );
      this.cache.set(path, recording);
      recording.catch(() => this.cache.delete(path));
    }
    return recording;
  }
}
