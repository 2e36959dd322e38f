/**
 * Which ranking parameters each mode reads, derived from the two tables rather than listed: a
 * parameter whose description names a mode (`HYBRID_HIERARCHICAL: …`) is read by that mode only;
 * λ by the modes with `usesLambda`, alpha by those with `usesAlpha`; the bounds on the ranked
 * passages (perDocument, perDocumentDecay) by every mode that returns passages. A corpus setting a
 * mode does not read would be stored and never used, so setting one is refused (settings.ts).
 */
import { MODES, RETRIEVAL_MODES, type ModeSpec, type RetrievalMode } from './modes';
import { RANKING, RANKING_NAMES, type RankingName } from './parameters';

/** The one mode a parameter's description names as its reader, or null. */
function namedMode(name: RankingName): RetrievalMode | null {
  const named = /^([A-Z_]+): /.exec(RANKING[name].description)?.[1];
  return named !== undefined && named in MODES ? (named as RetrievalMode) : null;
}

/** The parameters a mode's flags say it reads. */
const BY_FLAG: Partial<Record<RankingName, (spec: ModeSpec) => boolean>> = {
  lambda: (spec) => spec.usesLambda,
  alpha: (spec) => spec.usesAlpha,
};

export function modeReads(mode: RetrievalMode, name: RankingName): boolean {
  const only = namedMode(name);
  if (only) return only === mode;
  const flag = BY_FLAG[name];
  return flag ? flag(MODES[mode]) : !MODES[mode].documentsOnly;
}

/** Each mode's parameters, in the parameter table's order. */
export const MODE_PARAMETERS = Object.fromEntries(RETRIEVAL_MODES.map((mode) => [mode, RANKING_NAMES.filter((name) => modeReads(mode, name))])) as Record<
  RetrievalMode,
  RankingName[]
>;

/** Why `mode` takes no setting of `name` (naming what it reads, and which modes read `name`), or undefined when it reads it. */
export function unreadProblem(mode: RetrievalMode, name: RankingName): string | undefined {
  if (modeReads(mode, name)) return undefined;
  const reads = MODE_PARAMETERS[mode];
  const readers = RETRIEVAL_MODES.filter((m) => modeReads(m, name));
  return (
    `${mode} does not read ${name}, so a setting of it would never be used; ${mode} reads ${reads.length > 0 ? reads.join(', ') : 'none of the ranking parameters'}` +
    (readers.length > 0 ? ` (${name} is read by ${readers.join(', ')})` : '')
  );
}
