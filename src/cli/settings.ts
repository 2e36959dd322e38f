import type { Config } from '../config';
import { settingsHistory } from '../store/retrieval-settings';
import { onStore } from './answering';

/**
 * `dhr settings history [--limit N]`: the versions, newest first, as JSON. The API has no twin
 * (retrievalSettings is the version in force only), so this reads the store; `show`, `set` and
 * `rollback` are operations and printers (cli/operations.ts).
 */
export function settingsHistoryCommand(config: Config, limit: number): Promise<number> {
  return onStore(config, 'settings', async (db) => {
    console.log(JSON.stringify(await settingsHistory(db, limit), null, 2));
    return 0;
  });
}
