/**
 * SWE-agent trajectories (`.traj`): a JSON object whose `history` is the OpenAI chat list the agent
 * sent (system, user, assistant with `tool_calls`, tool with `tool_call_ids`), beside `trajectory`,
 * `info`, `replay_config`, ... which are kept as they are for export. Pure.
 */
import type { ContextItem } from '../items';
import { chatMessageFromJson, chatMessageToJson } from './chat-messages';
import {
  defaultIdPrefix,
  finishItems,
  makeItem,
  type ImportedSession,
  type ImportOptions,
  type SessionDocument,
} from './common';
import { ImportError } from './errors';
import { describe, isRecord, parseJson, type JsonObject } from './json';

/**
 * Import from an already parsed trajectory.
 *
 * Meta messages: only the first user message that is not a demonstration is the user's (the
 * task); demonstrations (`is_demo`) and every later user message (observations and reminders the
 * agent framework writes) are meta, so they never start a round.
 */
export function sweAgentFromValue(value: unknown, options: ImportOptions, idPrefix: string): ImportedSession {
  if (!isRecord(value)) throw new ImportError(`expected a trajectory object, got ${describe(value)}`);
  const history = value.history;
  if (!Array.isArray(history)) {
    throw new ImportError(`expected the list of messages, got ${describe(history)}`, { field: 'history' });
  }
  let taskSeen = false;
  const items: ContextItem[] = history.map((raw, i) => {
    const { fields, ...converted } = chatMessageFromJson(raw, `history[${i}]`, 'swe-agent');
    let isMeta = isRecord(raw) && raw.is_demo === true;
    if (converted.type === 'USER_MESSAGE' && !isMeta) {
      isMeta = taskSeen;
      taskSeen = true;
    }
    return makeItem(converted, {
      id: `${idPrefix}${i}`,
      isMeta,
      origin: { format: 'swe-agent', index: i, fields },
    });
  });
  const document: SessionDocument = { format: 'swe-agent', top: { ...value, history: null } };
  return { format: 'swe-agent', items: finishItems(items, options.tokenizer), document };
}

/**
 * Imports a SWE-agent trajectory (`.traj` JSON).
 * @throws ImportError naming the field (`history[3].role`, ...) or the line of a JSON syntax error
 */
export function importSweAgentTraj(text: string, options: ImportOptions): ImportedSession {
  return sweAgentFromValue(parseJson(text), options, options.idPrefix ?? defaultIdPrefix('swe-agent', text));
}

/**
 * Writes items back as the trajectory they came from: the document's top-level keys, `history`
 * rebuilt from the items in order (SWE-agent side fields restored; other items in the plain API
 * shape with `tool_call_ids`). An unchanged import gives back a deep-equal document.
 */
export function exportSweAgentTraj(
  items: readonly ContextItem[],
  document: Extract<SessionDocument, { format: 'swe-agent' }>,
): string {
  const history: JsonObject[] = items.flatMap((item) =>
    item.type === 'TOOL_DEFINITIONS'
      ? []
      : [
          chatMessageToJson(
            item.message,
            item.origin?.format === 'swe-agent' ? item.origin.fields : undefined,
            'swe-agent',
          ),
        ],
  );
  return JSON.stringify({ ...document.top, history }, null, 2) + '\n';
}
