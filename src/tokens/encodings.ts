/**
 * Which BPE encoding a model uses, and the encodings' data (ranks and split pattern from
 * js-tiktoken), loaded once per process and cached.
 */
import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';

/** The encodings this project counts with. */
export const ENCODING_NAMES = ['o200k_base', 'cl100k_base'] as const;
export type EncodingName = (typeof ENCODING_NAMES)[number];

/**
 * The encoding of a model, by name (case-insensitive; a provider prefix such as `openai/` or
 * `azure/` is ignored):
 *
 * - `cl100k_base`: the GPT-4 and GPT-3.5 generation — `gpt-4`, `gpt-4-*` (`gpt-4-turbo`,
 *   `gpt-4-32k`, `gpt-4-0613`, ...), `gpt-3.5-*`, `gpt-35-*` (Azure spelling), and the
 *   `text-embedding-ada-002` / `text-embedding-3-*` embedding models.
 * - `o200k_base`: everything else — `gpt-4o*`, `gpt-4.1*`, `gpt-4.5*`, `gpt-5*`, the o-series
 *   (`o1`, `o3`, `o4-mini`, ...), `gpt-oss-*`, and any model this list does not know (other
 *   providers' models are counted with it too: an estimate, which the model's reported usage
 *   replaces when present, DESIGN.md §6).
 */
export function encodingForModel(model: string): EncodingName {
  const name = model.trim().toLowerCase().split('/').pop() ?? '';
  if (name === 'gpt-4' || name.startsWith('gpt-4-')) return 'cl100k_base';
  if (name.startsWith('gpt-3.5') || name.startsWith('gpt-35')) return 'cl100k_base';
  if (name === 'text-embedding-ada-002' || name.startsWith('text-embedding-3')) return 'cl100k_base';
  return 'o200k_base';
}

/** An encoding ready to use: byte sequence (one char per byte) → rank, and the pre-split pattern. */
export interface EncodingData {
  name: EncodingName;
  ranks: Map<string, number>;
  /** js-tiktoken's split pattern (global, unicode); callers reset `lastIndex` or use `matchAll`. */
  pattern: RegExp;
}

interface RankFile {
  pat_str: string;
  bpe_ranks: string;
}

const RANK_FILES: Record<EncodingName, RankFile> = {
  o200k_base: o200kBase,
  cl100k_base: cl100kBase,
};

const loaded = new Map<EncodingName, EncodingData>();

/**
 * The ranks of an encoding, parsed on first use (~0.25 s for o200k_base) and cached for the life
 * of the process. Keys are byte sequences as binary strings (one char per byte, as `atob` returns
 * them), which makes lookups of a piece's bytes cheap.
 */
export function loadEncoding(name: EncodingName): EncodingData {
  const cached = loaded.get(name);
  if (cached) return cached;
  const file = RANK_FILES[name];
  const ranks = new Map<string, number>();
  // js-tiktoken's compact format: one line per run of consecutive ranks, "<tag> <first rank> <base64 token>...".
  for (const line of file.bpe_ranks.split('\n')) {
    if (line.length === 0) continue;
    const fields = line.split(' ');
    const first = Number.parseInt(fields[1] ?? '', 10);
    for (let i = 2; i < fields.length; i++) ranks.set(atob(fields[i] as string), first + i - 2);
  }
  const data: EncodingData = { name, ranks, pattern: new RegExp(file.pat_str, 'gu') };
  loaded.set(name, data);
  return data;
}
