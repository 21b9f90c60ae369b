/**
 * Importers and exporters of agent sessions (OpenAI chat lists, SWE-agent trajectories, pi
 * sessions): text in, items out, and back. Pure: file reading happens in the caller.
 */
export type { ImportedSession, ImportOptions, OpenAILayout, PiSlot, SessionDocument } from './common';
export { ImportError } from './errors';
export { exportOpenAIChat, exportOpenAIDocument, importOpenAIChat } from './openai-chat';
export { exportPiSession, importPiSession } from './pi-session';
export { detectSessionFormat, exportSession, importSession, type DetectedFormat } from './session';
export { exportSweAgentTraj, importSweAgentTraj } from './swe-agent';
