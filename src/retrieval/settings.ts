import { DomainError, echo, ErrorCode } from '../errors';
import { unreadProblem } from './mode-parameters';
import { MODES, RETRIEVAL_MODES, type RetrievalMode } from './modes';
import type { CorpusSettings } from './retrieve';
import { RANKING, RANKING_NAMES, rankingProblem, resolveRanking, type RankingLayer, type RankingName } from './parameters';
import type { Database, Queryable } from '../store/db';
import { addSettingsVersion, currentSettings, rollbackSettings, type SettingsVersion, type StoredSettings } from '../store/retrieval-settings';

export type { CorpusSettings };

const bad = (argument: string, message: string) => new DomainError(ErrorCode.BAD_USER_INPUT, message, { argument });

/** A mode's settings as given (a JSON object of parameter → value), checked against the parameter table; refuses naming the field. */
export function checkModeSettings(mode: string, values: Record<string, unknown>): { mode: RetrievalMode; layer: RankingLayer } {
  if (!RETRIEVAL_MODES.includes(mode as RetrievalMode)) throw bad('mode', `mode must be one of ${RETRIEVAL_MODES.join(', ')}, got ${echo(mode)}`);
  for (const name of Object.keys(values)) {
    if (!RANKING_NAMES.includes(name as RankingName)) {
      throw bad(`values.${name}`, `${name} is not a ranking parameter; the parameters are ${RANKING_NAMES.join(', ')}`);
    }
  }
  const problem = rankingProblem(values as RankingLayer);
  if (problem) throw bad(`values.${problem.name}`, problem.message);
  for (const name of Object.keys(values) as RankingName[]) {
    const unread = unreadProblem(mode as RetrievalMode, name);
    if (unread) throw bad(`values.${name}`, unread);
  }
  return { mode: mode as RetrievalMode, layer: values as RankingLayer };
}

/** Stored settings as layers; a value the table no longer allows (a parameter renamed or narrowed) is left out. */
export function corpusSettingsOf(version: SettingsVersion | undefined): CorpusSettings {
  const out: CorpusSettings = {};
  for (const [mode, values] of Object.entries(version?.settings ?? {})) {
    if (!(mode in MODES)) continue;
    const layer: Record<string, unknown> = {};
    for (const name of RANKING_NAMES) {
      const value = values[name];
      if (value !== undefined && RANKING[name].problem(value) === undefined) layer[name] = value;
    }
    out[mode as RetrievalMode] = layer as RankingLayer;
  }
  return out;
}

export interface SettingsChange {
  /** Parameters to set (perDocument null: no bound, overriding PER_DOCUMENT). */
  values?: Record<string, unknown>;
  /** Parameters to remove from the mode's settings (they fall back to the environment, then the mode's default). */
  unset?: string[];
  setBy: string;
  note?: string;
  evidence?: Record<string, unknown>;
}

/** Sets some of a mode's parameters (the others stay as they are) as a new version; checked first, so a refusal changes nothing. */
export function setModeSettings(db: Database, modeName: string, change: SettingsChange): Promise<SettingsVersion> {
  const { mode, layer } = checkModeSettings(modeName, change.values ?? {});
  for (const name of change.unset ?? []) {
    if (!RANKING_NAMES.includes(name as RankingName))
      throw bad('unset', `unset names ${name}, which is not a ranking parameter; the parameters are ${RANKING_NAMES.join(', ')}`);
    if (name in layer) throw bad('unset', `unset names ${name}, which values also sets`);
  }
  if (Object.keys(layer).length === 0 && (change.unset ?? []).length === 0) throw bad('values', 'give at least one parameter to set or unset');
  return addSettingsVersion(db, async (current) => {
    const settings: StoredSettings = structuredClone(current?.settings ?? {});
    const merged: Record<string, unknown> = { ...(settings[mode] ?? {}), ...layer };
    for (const name of change.unset ?? []) delete merged[name];
    if (Object.keys(merged).length > 0) settings[mode] = merged;
    else delete settings[mode];
    return { settings, setBy: change.setBy, note: change.note, evidence: change.evidence };
  });
}

export { rollbackSettings };

/** A version's record as the API and the CLI show it (every field null when no version was ever set). */
export function versionRecord(v: SettingsVersion | undefined) {
  return {
    version: v?.version ?? null,
    setBy: v?.setBy ?? null,
    note: v?.note ?? null,
    evidence: v?.evidence ?? null,
    previous: v?.previous ?? null,
    createdAt: v?.createdAt ?? null,
  };
}

/** Every mode's ranking parameters in force for a question that gives none: value and source (corpus, environment, mode). */
export function parametersInForce(version: SettingsVersion | undefined, environment: RankingLayer) {
  const corpus = corpusSettingsOf(version);
  return RETRIEVAL_MODES.map((mode) => {
    const r = resolveRanking(MODES[mode].defaults, { corpus: corpus[mode], environment });
    return { mode, parameters: RANKING_NAMES.map((name) => ({ name, value: r.values[name], source: r.sources[name] })) };
  });
}

/**
 * The corpus's settings for retrieval, read at most once per `ttlMs` by this process: every
 * process (replicas' readers and Citus coordinators alike) picks up a change within that time
 * without a restart, and a change made through this process applies at once (invalidate).
 */
export class CorpusSettingsSource {
  private cached?: { at: number; value: Promise<CorpusSettings> };

  constructor(
    private readonly db: Queryable,
    private readonly ttlMs = 1000,
  ) {}

  get(): Promise<CorpusSettings> {
    const now = Date.now();
    if (!this.cached || now - this.cached.at >= this.ttlMs) {
      const value = currentSettings(this.db).then(corpusSettingsOf);
      // A failed read is not kept: the next question tries again.
      value.catch(() => {
        if (this.cached?.value === value) this.cached = undefined;
      });
      this.cached = { at: now, value };
    }
    return this.cached.value;
  }

  invalidate(): void {
    this.cached = undefined;
  }
}
