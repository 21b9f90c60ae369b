/**
 * What a message says, by pattern: an error, a completion, a decision, a stated next step. Shared
 * by importance scoring, key-event extraction and the extractive summarizer so they agree.
 *
 * Pure module.
 */

/** An error or failure is reported. */
export const ERROR_TEXT =
  /\b(error|exception|traceback|failed|failure|fatal|panic|cannot|could not|not found|denied)\b/i;
/** Something is done, fixed or passing. */
export const DONE_TEXT =
  /\b(done|completed?|finished|success(ful(ly)?)?|resolved|fixed|works now|all tests pass(ed)?|passing)\b/i;
/** A decision, constraint or preference is stated. */
export const DECISION_TEXT =
  /\b(decid(e|ed)|must|should not|important|requirement|constraint|prefer|never|always|plan)\b/i;
/** A sentence that announces what comes next. */
export const NEXT_STEP_TEXT = /\b(next,?|i will|i'll|let me|then i|todo|remaining|still need)\b/i;
