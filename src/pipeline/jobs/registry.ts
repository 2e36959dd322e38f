import { ExternalEncoder, isExternal } from '../../encoders/external';
import { EncoderSet, loadEncoder } from '../../encoders/set';
import type { QuestionQueueOptions } from '../../encoders/questions';
import type { EncoderSpec } from '../../encoders/spec';
import { ENCODER_ROLES, EncoderError, type Encoder, type EncoderRole } from '../../encoders/types';
import { activateModel, activeAssignment, type ActiveAssignment } from '../../store/active';
import { activeAdapterId, adapterProblem, loadAdapter, type LoadedAdapter } from '../../store/adapters';
import type { Database } from '../../store/db';
import type { EmbeddingModelRow } from '../../store/embeddings';
import { prepareEmbedding, type EmbeddingTargets } from '../embed';

export interface RegistryOptions {
  cacheDir?: string;
  /** Intra-op threads for corpus embedding and for questions (EncoderSetOptions). */
  threads?: number;
  queryThreads?: number;
  /** Documents and passages encoded in a worker thread (EncoderSetOptions.bulkThread): a server's choice. */
  bulkThread?: boolean;
  /** Question micro-batching and cache (DEFAULT_QUESTION_QUEUE). */
  questions?: QuestionQueueOptions;
  /** How long a process trusts its view of the active models before reading it again. */
  ttlMs?: number;
}

/**
 * The models this process has loaded, and which of them serve each DHR role now. The active
 * assignment lives in the database (active_encoders), so an activation by any process reaches
 * every server within ttlMs; each query takes one snapshot, so it never mixes two assignments.
 */
export class ModelRegistry {
  private readonly loaded = new Map<number, Promise<Encoder>>();
  /** Encoders handed in by the caller (`of`) are the caller's to close. */
  private readonly borrowed = new Set<Encoder>();
  private snapshot?: { key: string; targets: EmbeddingTargets | undefined; at: number };
  /** The active adapter's weights, read again only when another adapter becomes active. */
  private adapter?: { id: number; loaded: LoadedAdapter | undefined };
  private readonly ttlMs: number;

  constructor(
    private readonly db: Database,
    private readonly options: RegistryOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? 1000;
  }

  /**
   * Opens the registry for a server or CLI. A store with no active model yet gets the configured
   * encoders (ENCODER…) as its first assignment; after that the database decides, and switching
   * is activateEmbeddingModel's job.
   */
  static async open(db: Database, options: RegistryOptions & { encoders: EncoderSpec }): Promise<ModelRegistry> {
    const registry = new ModelRegistry(db, options);
    const active = await activeAssignment(db);
    if (ENCODER_ROLES.some((r) => !active[r])) {
      const encoders = await EncoderSet.load(options.encoders, options);
      try {
        await registry.adopt(encoders);
      } catch (error) {
        await encoders.close();
        throw error;
      }
    }
    return registry;
  }

  /** A registry serving encoders already loaded (tests, embedding tools), activated for their roles. */
  static async of(db: Database, encoders: EncoderSet, options: RegistryOptions = {}): Promise<ModelRegistry> {
    const registry = new ModelRegistry(db, options);
    for (const encoder of encoders.distinct()) registry.borrowed.add(encoder);
    await registry.adopt(encoders);
    return registry;
  }

  private async adopt(encoders: EncoderSet): Promise<void> {
    const targets = await prepareEmbedding(this.db, encoders);
    const rows = new Map<string, EmbeddingModelRow>([
      [targets.document.name, targets.document],
      [targets.passage.name, targets.passage],
    ]);
    const byModel = new Map<Encoder, EncoderRole[]>();
    for (const role of ENCODER_ROLES) {
      const encoder = encoders.byRole[role];
      byModel.set(encoder, [...(byModel.get(encoder) ?? []), role]);
    }
    for (const [encoder, roles] of byModel) {
      // Question-only models are not registered by prepareEmbedding (they store no vectors).
      const row = rows.get(encoder.name) ?? (await prepareEmbedding(this.db, EncoderSet.of(sameForAll(encoder)))).document;
      this.loaded.set(row.id, Promise.resolve(encoder));
      await activateModel(this.db, row.name, roles, { bootstrap: true });
    }
    this.invalidate();
  }

  /** The encoder for a stored model, loaded once from its recorded source and checked against its checksum. */
  encoderFor(model: EmbeddingModelRow): Promise<Encoder> {
    let encoder = this.loaded.get(model.id);
    if (!encoder) {
      encoder = loadStoredModel(model, this.options);
      this.loaded.set(model.id, encoder);
      encoder.catch(() => this.loaded.delete(model.id));
    }
    return encoder;
  }

  /**
   * The encoders and stored models retrieval and ingest use now; undefined if nothing is active.
   * `fresh` reads the assignment even if the snapshot is young (ingest: what it just wrote must
   * get vectors for the models active after its commit, not a second ago).
   */
  async current(options: { fresh?: boolean } = {}): Promise<EmbeddingTargets | undefined> {
    if (!options.fresh && this.snapshot && Date.now() - this.snapshot.at < this.ttlMs) return this.snapshot.targets;
    // One read at a time: a burst of questions arriving as the snapshot expires shares one read
    // instead of queueing hundreds for pooled connections. A fresh caller (ingest, after its commit)
    // lets the read in flight finish, since it may have started before that commit, then reads anew.
    if (!options.fresh && this.refreshing) return this.refreshing;
    if (options.fresh && this.refreshing) await this.refreshing.catch(() => undefined);
    const refresh = this.refresh();
    this.refreshing = refresh;
    try {
      return await refresh;
    } finally {
      if (this.refreshing === refresh) this.refreshing = undefined;
    }
  }

  private refreshing?: Promise<EmbeddingTargets | undefined>;

  private async refresh(): Promise<EmbeddingTargets | undefined> {
    const now = Date.now();
    const assignment = await activeAssignment(this.db);
    const adapterId = await activeAdapterId(this.db);
    const key = [...ENCODER_ROLES.map((r) => assignment[r]?.id ?? '-'), adapterId ?? '-'].join(',');
    if (this.snapshot?.key !== key) {
      const targets = await this.targetsFor(assignment);
      if (targets && adapterId !== undefined) await this.withAdapter(targets, assignment, adapterId);
      // Before any query can use the new assignment (read replicas: they must have replayed it).
      for (const listener of this.switchListeners) await listener();
      this.snapshot = { key, targets, at: now };
    } else {
      this.snapshot.at = now;
    }
    return this.snapshot.targets;
  }

  private readonly jobListeners = new Set<() => void>();
  private readonly switchListeners = new Set<() => Promise<void>>();

  /**
   * Called, and awaited, whenever this process sees a new active assignment or adapter (its first
   * one included), before the snapshot is handed out.
   */
  beforeSwitch(listener: () => Promise<void>): () => void {
    this.switchListeners.add(listener);
    return () => this.switchListeners.delete(listener);
  }

  /** Workers in this process listen, so a job queued here starts without waiting for a poll. */
  onJobQueued(listener: () => void): () => void {
    this.jobListeners.add(listener);
    return () => this.jobListeners.delete(listener);
  }

  jobQueued(): void {
    for (const listener of this.jobListeners) listener();
  }

  /** Forget the cached assignment (this process just changed it). */
  invalidate(): void {
    this.snapshot = undefined;
    this.refreshing = undefined; // a read in flight may predate the change
  }

  /**
   * Adds the active adapter to the targets if it fits the active models. One that does not (a model
   * was switched after it was activated) is skipped with a warning rather than failing retrieval:
   * the model switch was legal, and today's scores are still right for it.
   */
  private async withAdapter(targets: EmbeddingTargets, assignment: ActiveAssignment, id: number): Promise<void> {
    if (this.adapter?.id !== id) this.adapter = { id, loaded: await loadAdapter(this.db, id) };
    const loaded = this.adapter.loaded;
    if (!loaded) return;
    const problem = adapterProblem(loaded.row, assignment);
    if (problem) targets.adapterWarning = `the active adapter is not applied: ${problem.message}`;
    else targets.adapter = loaded.adapter;
  }

  private async targetsFor(assignment: ActiveAssignment): Promise<EmbeddingTargets | undefined> {
    if (ENCODER_ROLES.some((r) => !assignment[r])) return undefined;
    const entries = await Promise.all(ENCODER_ROLES.map(async (r) => [r, await this.encoderFor(assignment[r]!)] as const));
    return {
      encoders: EncoderSet.of(Object.fromEntries(entries) as Record<EncoderRole, Encoder>, this.options.questions),
      document: assignment.document!,
      passage: assignment.passage!,
    };
  }

  async close(): Promise<void> {
    const encoders = await Promise.allSettled(this.loaded.values());
    await Promise.all(encoders.map((e) => (e.status === 'fulfilled' && !this.borrowed.has(e.value) ? e.value.close() : undefined)));
    this.loaded.clear();
  }
}

function sameForAll(encoder: Encoder): Record<EncoderRole, Encoder> {
  return { questionDocument: encoder, document: encoder, questionPassage: encoder, passage: encoder };
}

async function loadStoredModel(model: EmbeddingModelRow, options: RegistryOptions): Promise<Encoder> {
  // Nothing to load: its vectors come from the client.
  if (isExternal(model)) return new ExternalEncoder(model.name, model.dimension);
  if (!model.source) {
    throw new EncoderError(model.name, 'no source recorded for this model; register its folder again (registerEmbeddingModel)');
  }
  const encoder = await loadEncoder(model.source, options);
  if (encoder.checksum !== model.checksum || encoder.dimension !== model.dimension || encoder.name !== model.name) {
    await encoder.close();
    throw new EncoderError(
      model.name,
      `${model.source}: the files there are no longer the registered model (checksum, dimension or name differ); ` +
        'their vectors would not match the stored ones',
    );
  }
  return encoder;
}
