/** The error every importer raises on malformed input: it names the line (JSONL) and/or the field. */
export class ImportError extends Error {
  /** 1-based line of the input (JSONL formats, or where a JSON syntax error is). */
  readonly line: number | undefined;
  /** Path of the offending field, e.g. `history[3].tool_calls[0].function.name`. */
  readonly field: string | undefined;
  /** The problem alone, without the location. */
  readonly detail: string;

  constructor(detail: string, where: { line?: number; field?: string } = {}) {
    const location = [where.line !== undefined ? `line ${where.line}` : '', where.field ?? '']
      .filter(Boolean)
      .join(', ');
    super(location ? `${location}: ${detail}` : detail);
    this.name = 'ImportError';
    this.line = where.line;
    this.field = where.field;
    this.detail = detail;
  }
}
