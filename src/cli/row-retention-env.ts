// `serve` reads the row retention settings from the environment; a bad value is a sentence.
import { rowRetentionFromEnv, type RowRetentionDays } from '../engine/row-retention/retention-settings.js';
import { UsageError } from './usage.js';

export function rowRetentionFromEnvForServe(env: NodeJS.ProcessEnv = process.env): RowRetentionDays {
  try {
    return rowRetentionFromEnv(env);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
