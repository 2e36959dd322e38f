import { basename } from 'node:path';
import { ADAPTER_LEVELS, type AdapterLevel, type LinearMap } from '../adapters/linear';
import { readPairs, type PairKind, type TrainingPair } from '../adapters/pairs-file';
import { TRAIN_DEFAULTS, trainLinearMap, type EpochRecord, type TrainOptions, type TrainResult } from '../adapters/train';
import { DomainError, ErrorCode, badUserInput, conflict } from '../errors';
import { activeAssignment } from '../store/active';
import { activateAdapterIn, adapterByName, LEVEL_ROLES, registerAdapter, type AdapterBase, type AdapterRow } from '../store/adapters';
import type { Database } from '../store/db';
import type { EmbeddingTargets } from '../store/embeddings';
import { readStoredVectors } from '../store/training-vectors';

export type AdaptEvent =
  | { stage: 'read'; pairs: number }
  | { stage: 'encode'; level: AdapterLevel; done: number; total: number }
  | { stage: 'vectors'; level: AdapterLevel; targets: number }
  | { stage: 'train'; level: AdapterLevel; done: number; total: number }
  | { stage: 'epoch'; level: AdapterLevel; record: EpochRecord };

export interface AdaptOptions extends Omit<TrainOptions, 'onBatch' | 'onEpoch'> {
  name: string;
  /** Default: both levels. */
  levels?: readonly AdapterLevel[];
  /** Register and activate in one transaction. */
  activate?: boolean;
  /** Hard negatives kept per pair and level (passages: in-section, in-document, BM25 in turn). */
  negativesPerPair?: number;
  onEvent?: (event: AdaptEvent) => void;
}

export const ADAPT_DEFAULTS = { negativesPerPair: 8 } as const;

/** What training a level did, as stored in the adapter's training record. */
export type LevelReport = Omit<TrainResult, 'map'> & { skipped: number; seconds: number };

export interface AdaptResult {
  adapter: AdapterRow;
  levels: Partial<Record<AdapterLevel, LevelReport>>;
  activated: boolean;
}

/** A pair reduced to what training reads: the question text and ids per level. */
export interface CompactPair {
  question: string;
  positive: Record<AdapterLevel, number>;
  negatives: Record<AdapterLevel, number[]>;
}

/** Exported for tests: what training reads of a pair, with at most k negatives per level. */
export function compactPair(pair: TrainingPair, k: number): CompactPair {
  // Passages a person judged wrong come first (the strongest signal); then interleave DHR's three
  // kinds so a cap keeps some of each (DHR §3.4 uses all three).
  const judged = pair.negatives.judged ?? [];
  const kinds = [pair.negatives.inSec, pair.negatives.inDoc, pair.negatives.bm25];
  // A judged passage can also be a BM25 negative: each counts once.
  const passages = new Set<number>(judged.slice(0, k).map((p) => p.passageId));
  for (let i = 0; passages.size < k && kinds.some((list) => i < list.length); i++) {
    for (const list of kinds) if (i < list.length && passages.size < k) passages.add(list[i].passageId);
  }
  return {
    question: pair.question,
    positive: { passage: pair.positive.passageId, document: pair.positiveDocument.documentId },
    negatives: { passage: [...passages], document: pair.negatives.documents.slice(0, k).map((d) => d.documentId) },
  };
}

/**
 * `dhr adapt`: trains a query-side adapter on mined pairs over the active models' stored vectors
 * and registers it (and activates it, in the same transaction, when asked). Questions are encoded
 * with the active question encoders; positives and negatives are read from the store by id.
 * Anything wrong (a name taken, too few pairs, a bad line, mismatched dimensions) throws before
 * anything is written.
 */
export async function adapt(db: Database, targets: EmbeddingTargets, files: readonly string[], options: AdaptOptions): Promise<AdaptResult> {
  const name = options.name.trim();
  if (name === '' || name.length > 200) throw badUserInput('name must be 1–200 characters', 'name');
  if (name === 'none') throw badUserInput('"none" means no adapter; choose another name', 'name');
  const levels = ADAPTER_LEVELS.filter((l) => (options.levels ?? ADAPTER_LEVELS).includes(l));
  if (levels.length === 0) throw badUserInput('levels must name document, passage or both', 'levels');
  if (files.length === 0) throw badUserInput('give at least one pairs file', 'pairs');
  if (await adapterByName(db, name)) throw conflict(`an adapter named "${name}" already exists; choose another name`, 'name');
  const k = options.negativesPerPair ?? ADAPT_DEFAULTS.negativesPerPair;
  if (!Number.isInteger(k) || k < 0) throw badUserInput('negativesPerPair must be a whole number ≥ 0', 'negativesPerPair');

  const assignment = await activeAssignment(db);
  const bases: Partial<Record<AdapterLevel, AdapterBase>> = {};
  for (const level of levels) {
    const roles = LEVEL_ROLES[level];
    const question = assignment[roles.question];
    const target = assignment[roles.target];
    if (!question || !target || Number(target.id) !== Number(targets[level].id)) {
      throw new DomainError(ErrorCode.CONFLICT, `the active ${level} models changed while adapt started; run it again`);
    }
    bases[level] = { question, target };
  }
  const dims = new Set(levels.map((l) => Number(bases[l]!.target.dimension)));
  if (dims.size > 1) {
    throw new DomainError(
      ErrorCode.DIMENSION_MISMATCH,
      `the document (${bases.document!.target.dimension}-d) and passage (${bases.passage!.target.dimension}-d) models differ in dimension; train one level at a time (levels)`,
      { argument: 'levels' },
    );
  }
  const dim = [...dims][0];

  const pairs: CompactPair[] = [];
  const kinds: Partial<Record<PairKind, number>> = {};
  for (const file of files) {
    for await (const pair of readPairs(file)) {
      pairs.push(compactPair(pair, k));
      kinds[pair.kind] = (kinds[pair.kind] ?? 0) + 1;
    }
  }
  options.onEvent?.({ stage: 'read', pairs: pairs.length });
  const minPairs = options.minPairs ?? TRAIN_DEFAULTS.minPairs;
  if (pairs.length < minPairs) {
    throw badUserInput(`${pairs.length} training pairs are too few to train a ${dim}×${dim} adapter; give at least ${minPairs}`, 'pairs');
  }

  const { maps, reports } = await trainLevels(db, targets, levels, pairs, dim, k, options);

  const training = { files: files.map((f) => basename(f)), pairs: pairs.length, kinds, negativesPerPair: k, levels: reports };
  const adapter = await db.transaction(async (tx) => {
    const row = await registerAdapter(tx, { name, dimension: dim, maps, models: bases, training });
    if (options.activate) await activateAdapterIn(tx, name);
    return row;
  });
  return { adapter: { ...adapter, active: Boolean(options.activate) }, levels: reports, activated: Boolean(options.activate) };
}

/** What `trainAdapterMaps` returns: a map and a training report per level, nothing stored. */
export interface TrainedMaps {
  dim: number;
  maps: Partial<Record<AdapterLevel, LinearMap>>;
  reports: Partial<Record<AdapterLevel, LevelReport>>;
  pairs: number;
  kinds: Partial<Record<PairKind, number>>;
}

/**
 * The training half of `adapt` on pairs in memory: the same encoding, vectors and trainer, but
 * nothing registered (the evaluation applies the maps to a copy of its targets). Dimensions come
 * from the targets' models; too few pairs throws as `adapt` does.
 */
export async function trainAdapterMaps(
  db: Database,
  targets: EmbeddingTargets,
  pairs: readonly TrainingPair[],
  options: Omit<AdaptOptions, 'name' | 'activate'> = {},
): Promise<TrainedMaps> {
  const levels = ADAPTER_LEVELS.filter((l) => (options.levels ?? ADAPTER_LEVELS).includes(l));
  const dims = new Set(levels.map((l) => Number(targets[l].dimension)));
  if (levels.length === 0 || dims.size !== 1) throw badUserInput('levels must name document, passage or both, of one dimension', 'levels');
  const dim = [...dims][0];
  const k = options.negativesPerPair ?? ADAPT_DEFAULTS.negativesPerPair;
  const kinds: Partial<Record<PairKind, number>> = {};
  for (const pair of pairs) kinds[pair.kind] = (kinds[pair.kind] ?? 0) + 1;
  const minPairs = options.minPairs ?? TRAIN_DEFAULTS.minPairs;
  if (pairs.length < minPairs) {
    throw badUserInput(`${pairs.length} training pairs are too few to train a ${dim}×${dim} adapter; give at least ${minPairs}`, 'pairs');
  }
  const { maps, reports } = await trainLevels(
    db,
    targets,
    levels,
    pairs.map((p) => compactPair(p, k)),
    dim,
    k,
    options,
  );
  return { dim, maps, reports, pairs: pairs.length, kinds };
}

/** Each level in turn: questions encoded (once per distinct encoder), stored vectors read, a map trained. */
async function trainLevels(
  db: Database,
  targets: EmbeddingTargets,
  levels: readonly AdapterLevel[],
  pairs: readonly CompactPair[],
  dim: number,
  k: number,
  options: Omit<AdaptOptions, 'name' | 'activate'>,
) {
  const maps: Partial<Record<AdapterLevel, LinearMap>> = {};
  const reports: Partial<Record<AdapterLevel, LevelReport>> = {};
  const encodedBy = new Map<unknown, Float32Array>();
  for (const level of levels) {
    const started = Date.now();
    const encoder = targets.encoders.byRole[LEVEL_ROLES[level].question];
    let questions = encodedBy.get(encoder);
    if (!questions) {
      questions = await encodeQuestions(encoder, LEVEL_ROLES[level].question, pairs, dim, (done) =>
        options.onEvent?.({ stage: 'encode', level, done, total: pairs.length }),
      );
      encodedBy.set(encoder, questions);
    }
    const data = await trainingData(db, level, Number(targets[level].id), pairs, questions, dim, k);
    options.onEvent?.({ stage: 'vectors', level, targets: data.targetCount });
    const result = trainLinearMap(data.data, {
      ...options,
      onBatch: (done, total) => options.onEvent?.({ stage: 'train', level, done, total }),
      onEpoch: (record) => options.onEvent?.({ stage: 'epoch', level, record }),
    });
    const { map, ...report } = result;
    maps[level] = map;
    reports[level] = { ...report, skipped: data.skipped, seconds: (Date.now() - started) / 1000 };
  }
  return { maps, reports };
}

const ENCODE_BATCH = 64;

async function encodeQuestions(
  encoder: EmbeddingTargets['encoders']['byRole']['questionPassage'],
  role: 'questionDocument' | 'questionPassage',
  pairs: readonly CompactPair[],
  dim: number,
  onProgress: (done: number) => void,
): Promise<Float32Array> {
  const out = new Float32Array(pairs.length * dim);
  for (let i = 0; i < pairs.length; i += ENCODE_BATCH) {
    const batch = pairs.slice(i, i + ENCODE_BATCH);
    const { vectors } = await encoder.encode(
      batch.map((p) => p.question),
      role,
    );
    vectors.forEach((v, j) => out.set(v, (i + j) * dim));
    onProgress(Math.min(i + ENCODE_BATCH, pairs.length));
  }
  return out;
}

/**
 * Turns a level's pairs into the trainer's arrays: each distinct positive or negative id read once
 * from the store. Pairs whose positive has no stored vector are skipped (counted); missing
 * negatives are dropped.
 */
async function trainingData(
  db: Database,
  level: AdapterLevel,
  modelId: number,
  pairs: readonly CompactPair[],
  questions: Float32Array,
  dim: number,
  k: number,
) {
  const ids = [...new Set(pairs.flatMap((p) => [p.positive[level], ...p.negatives[level]]))];
  const vectors = new Float32Array(ids.length * dim);
  const missing = await readStoredVectors(db, level, modelId, ids, dim, vectors);
  const row = new Map<number, number>();
  ids.forEach((id, i) => {
    if (!missing.has(id)) row.set(id, i);
  });
  const kept = pairs.map((p, i) => [p, i] as const).filter(([p]) => row.has(p.positive[level]));
  const q = new Float32Array(kept.length * dim);
  const positives = new Int32Array(kept.length);
  const negatives = new Int32Array(kept.length * k).fill(-1);
  kept.forEach(([p, i], j) => {
    q.set(questions.subarray(i * dim, (i + 1) * dim), j * dim);
    positives[j] = row.get(p.positive[level])!;
    let h = 0;
    for (const id of p.negatives[level]) {
      const r = row.get(id);
      if (r !== undefined && h < k) negatives[j * k + h++] = r;
    }
  });
  return {
    data: { dim, questions: q, positives, negatives, negativesPerPair: k, targets: vectors },
    skipped: pairs.length - kept.length,
    targetCount: ids.length - missing.size,
  };
}
