import type { Pool } from 'pg';
import type OpenAI from 'openai';
import { chatCompletion, llmBoundary } from '../src/llm';

export interface SmokeActivities {
  smokeActivity(input: { key: string; model: string }): Promise<{ stored: string; reply: string }>;
}

/** Writes a row to PostgreSQL, reads it back, and asks the LLM one question. */
export function smokeActivities(deps: { pool: Pool; llm: () => OpenAI }): SmokeActivities {
  return {
    async smokeActivity({ key, model }) {
      await deps.pool.query(
        'create table if not exists smoke_checks (key text primary key, at timestamptz not null default now())',
      );
      await deps.pool.query('insert into smoke_checks (key) values ($1) on conflict do nothing', [key]);
      const row = await deps.pool.query<{ key: string }>('select key from smoke_checks where key = $1', [
        key,
      ]);
      const completion = await llmBoundary(() =>
        chatCompletion(deps.llm(), { model, messages: [{ role: 'user', content: `smoke ${key}` }] }),
      );
      return { stored: row.rows[0]?.key ?? '', reply: completion.message.content ?? '' };
    },
  };
}
