import { parseDatabaseUrl } from './postgres';
import { parseTemporalAddress } from './temporal';

/** Checks the environment's addresses before anything is started, so a typo fails in a second. */
export function validateEnvironment(env: NodeJS.ProcessEnv = process.env): void {
  if (env.TEMPORAL_ADDRESS) parseTemporalAddress(env.TEMPORAL_ADDRESS);
  if (env.DATABASE_URL) parseDatabaseUrl(env.DATABASE_URL);
}
