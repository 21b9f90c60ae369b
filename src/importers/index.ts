/**
 * Importers and exporters of agent sessions (OpenAI chat lists, Anthropic message lists and Cline's
 * task exports, SWE-agent trajectories, pi sessions, Claude Code sessions, Codex rollouts, OpenHands
 * trajectories and V1 event histories, Gemini CLI's chats, OpenCode exports): text in, items out, and back. Pure: file reading happens in
 * the caller.
 */
export type { ImportedSession, ImportOptions, OpenAILayout, PiSlot, SessionDocument } from './common';
export { exportClaudeCodeSession } from './claude-code-export';
export { importClaudeCodeSession } from './claude-code-import';
export { exportCodexRollout } from './codex-export';
export { importCodexRollout } from './codex-import';
export { ImportError } from './errors';
export { exportAnthropicMessages, importAnthropicMessages } from './anthropic-messages';
export { importGeminiRecording } from './gemini-cli';
export { exportGeminiRecording } from './gemini-cli-export';
export { exportOpenAIChat, exportOpenAIDocument } from './openai-chat-export';
export { exportOpenHandsTrajectory } from './openhands-export';
export { importOpenHandsTrajectory } from './openhands-import';
export { importOpenAIChat } from './openai-chat-import';
export { importOpenCodeSession } from './opencode';
export { exportOpenCodeSession } from './opencode-export';
export { exportPiSession } from './pi-session-export';
export { importPiSession } from './pi-session-import';
export { exportSession } from './session-export';
export { detectSessionFormat, importSession, type DetectedFormat } from './session-import';
export { exportSweAgentTraj } from './swe-agent-export';
export { importSweAgentTraj } from './swe-agent-import';
