/**
 * The prompts of the summary call, as named constants (STYLE.md §10).
 *
 * Pure module.
 */

/** Tells the summarizer it reads a transcript and must not continue it (DESIGN.md §5). */
export const SUMMARIZER_SYSTEM_PROMPT =
  'You are a context summarization assistant. You read a transcript of a conversation between a user, ' +
  'an AI agent and its tools, and write a structured summary of it. Do NOT continue the conversation, ' +
  'do NOT answer questions in it and do NOT call tools. Only output the summary.';

/** The structured summary prompt (seed 002 DEFAULT_SUMMARY_PROMPT). */
export const SUMMARY_PROMPT = `You have been working on the task described above but have not yet completed it. Write a continuation summary that will allow you (or another instance of yourself) to resume work efficiently in a future context window where the conversation history will be replaced with this summary. Your summary should be structured, concise, and actionable. Include:

1. Task Overview
The user's core request and success criteria
Any clarifications or constraints they specified

2. Current State
What has been completed so far
Files created, modified, or analyzed (with paths if relevant)
Key outputs or artifacts produced

3. Important Discoveries
Technical constraints or requirements uncovered
Decisions made and their rationale
Errors encountered and how they were resolved
What approaches were tried that didn't work (and why)

4. Next Steps
Specific actions needed to complete the task
Any blockers or open questions to resolve
Priority order if multiple steps remain

5. Context to Preserve
User preferences or style requirements
Domain-specific details that aren't obvious
Any promises made to the user

Be concise but complete - err on the side of including information that would prevent duplicate work or repeated mistakes. Write in a way that enables immediate resumption of the task.

Wrap your summary in <summary></summary> tags.`;

/** When a previous summary exists: merge into it instead of summarizing it again (DESIGN.md §5). */
export const UPDATE_SUMMARY_PROMPT = `The transcript in <conversation> tags is NEW conversation that happened after the previous summary shown in <previous-summary> tags. Update the previous summary with this new conversation: keep everything in it that still holds, add what is new, move completed items from Next Steps to Current State, and drop what the new conversation shows to be obsolete. Do not summarize the previous summary again; produce one merged summary with the same five sections:

1. Task Overview
2. Current State
3. Important Discoveries
4. Next Steps
5. Context to Preserve

Be concise but complete - err on the side of including information that would prevent duplicate work or repeated mistakes.

Wrap the updated summary in <summary></summary> tags.`;

/** Put before the user's focus text (`/compact <focus>`). */
export const FOCUS_PREFIX = 'Additional focus for this summary (from the user): ';

/** Inserted where an oversized input was cut (seed 000's head/tail safe cut). */
export function middleCutMarker(droppedChars: number): string {
  return `\n\n[... ${droppedChars} characters of the middle of the conversation omitted to fit the summarizer ...]\n\n`;
}
