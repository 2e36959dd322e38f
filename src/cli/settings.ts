import type { Config } from '../config';
import { badUserInput } from '../errors';
import { parametersInForce, rollbackSettings, setModeSettings, versionRecord } from '../retrieval/settings';
import { settingsHistory, type SettingsVersion } from '../store/retrieval-settings';
import { onStore } from './answering';
import { printSettings } from './operations';

/** `dhr settings show` is an operation and a printer (cli/operations.ts); these change or list versions on the store. */
export type SettingsRequest = { history: number } | { rollback: true } | { set: { mode: string; values: string[]; unset: string[]; note?: string } };

/** `name=value` as JSON where it parses (numbers, true, false, null), else the text: `documentPassages=top3`. */
export function parseAssignment(assignment: string): [string, unknown] {
  const eq = assignment.indexOf('=');
  if (eq <= 0) throw badUserInput(`"${assignment}" is not name=value (e.g. lambda=0.3)`, 'values');
  const name = assignment.slice(0, eq);
  const text = assignment.slice(eq + 1);
  try {
    return [name, JSON.parse(text)];
  } catch {
    return [name, text];
  }
}

/**
 * `dhr settings set`, `rollback`, `history`: the corpus's retrieval settings in the store (a
 * running server picks a change up within a second). Prints the settings after, as JSON, as
 * `dhr settings show` does.
 */
export function settingsCommand(config: Config, request: SettingsRequest): Promise<number> {
  return onStore(config, 'settings', async (db) => {
    let version: SettingsVersion | undefined;
    if ('history' in request) {
      console.log(JSON.stringify(await settingsHistory(db, request.history), null, 2));
      return 0;
    }
    if ('rollback' in request) version = await rollbackSettings(db, 'cli');
    else {
      // Parsed inside onStore: a malformed assignment is an answer, not a crash.
      const values = Object.fromEntries(request.set.values.map(parseAssignment));
      version = await setModeSettings(db, request.set.mode, { values, unset: request.set.unset, setBy: 'cli', note: request.set.note });
    }
    return printSettings({ ...versionRecord(version), modes: parametersInForce(version, config.ranking) });
  });
}
