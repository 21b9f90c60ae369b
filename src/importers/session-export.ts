/**
 * One exit for any imported session: writes it back in the format it came from. Pure.
 */
import { exportAnthropicMessages } from './anthropic-messages';
import type { ImportedSession } from './common';
import { exportOpenAIDocument } from './openai-chat-export';
import { exportClaudeCodeSession } from './claude-code-export';
import { exportCodexRollout } from './codex-export';
import { exportGeminiRecording } from './gemini-cli-export';
import { exportOpenCodeSession } from './opencode-export';
import { exportOpenHandsTrajectory } from './openhands-export';
import { exportPiSession } from './pi-session-export';
import { exportSweAgentTraj } from './swe-agent-export';

/**
 * Writes a session back in the format it was imported from. For an unchanged import the result
 * parses to a value deep-equal to the parsed source (JSONL: line for line). The items may have
 * changed since (compacted, appended): see each format's exporter for how changes are written.
 */
export function exportSession(session: Pick<ImportedSession, 'items' | 'document'>): string {
  const { items, document } = session;
  switch (document.format) {
    case 'openai':
      return exportOpenAIDocument(items, document);
    case 'anthropic':
      return exportAnthropicMessages(items, document);
    case 'swe-agent':
      return exportSweAgentTraj(items, document);
    case 'pi':
      return exportPiSession(items, document);
    case 'claude-code':
      return exportClaudeCodeSession(items, document);
    case 'codex':
      return exportCodexRollout(items, document);
    case 'openhands':
      return exportOpenHandsTrajectory(items, document);
    case 'gemini':
      return exportGeminiRecording(items, document);
    case 'opencode':
      return exportOpenCodeSession(items, document);
  }
}
