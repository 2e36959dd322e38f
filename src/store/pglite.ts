import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types, type Extensions, type QueryOptions } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { pg_textsearch } from '@electric-sql/pglite-pg_textsearch';
import { BM25_INDEX_MARKER } from './bm25-index';
import { lockDataFolder } from './data-lock';
import { letLoopTurn } from './loop-turn';
import { settingsStatement, type Queryable } from './db';
import { StatementCounter } from './statements';
import { vectorBinary } from './vector';
import { createPrismaClient, type PrismaClient } from './prisma';
import { upgradePg17Folder, type CopyableDatabase } from './pglite-upgrade';

export interface PgliteOptions {
  /** Directory to persist into; undefined keeps everything in memory (tests). */
  dataDir?: string;
  /** Load pgvector (default). False only to exercise the missing-extension error path. */
  pgvector?: boolean;
  /**
   * PGLITE_BM25_INDEX: load pg_textsearch, so that migration 0026 builds the BM25 index in a new
   * store (store/bm25-index.ts). On unless false. A folder whose store has the index (its marker
   * file) always loads it: pg_textsearch is a preloaded library, needed to read the index at all.
   */
  bm25Index?: boolean;
}

/** The same int8 handling as the pg driver: counts as numbers. */
const parsers = { [types.INT8]: (v: string) => Number(v) };

/** pgvector always; pg_textsearch where the store has the BM25 index or is to get it. */
const extensionsFor = (indexed: boolean): Extensions => (indexed ? { vector, pg_textsearch } : { vector });

export class PgliteDatabase implements CopyableDatabase {
  readonly kind = 'pglite' as const;
  readonly statements = new StatementCounter();
  readonly location: string;
  readonly prisma: PrismaClient;
  /** Session settings the (single) connection last received. */
  private applied = '';
  /** query/exec/transaction calls in flight, and close()'s wait for none. */
  private active = 0;
  private idle?: () => void;
  private closing = false;

  private constructor(
    private readonly db: PGlite,
    location: string,
    /** Releases the data folder's lock (none in memory). */
    private readonly release?: () => Promise<void>,
  ) {
    this.location = location;
    this.prisma = createPrismaClient({ pglite: db }, this.statements);
  }

  static async open(options: PgliteOptions = {}): Promise<PgliteDatabase> {
    let release: (() => Promise<void>) | undefined;
    let dataDir: string | undefined;
    if (options.dataDir) {
      mkdirSync(options.dataDir, { recursive: true });
      // PGlite's file system (Emscripten's NODEFS) cannot mount a symbolic link: a DATA_DIR that is
      // one (a volume linked into place) failed with a bare ErrnoError (ENOTDIR). It gets the folder
      // the link names; messages still name the path as given.
      dataDir = realpathSync(options.dataDir);
      // Before PGlite touches a file: a second process is refused, not let in to corrupt them.
      release = await lockDataFolder(options.dataDir);
    }
    try {
      const indexed = options.bm25Index !== false || (options.dataDir !== undefined && existsSync(join(options.dataDir, BM25_INDEX_MARKER)));
      if (dataDir && options.pgvector !== false) {
        await upgradePg17Folder(dataDir, {
          openOld: (folder) => PgliteDatabase.openPostgres17(folder),
          openNew: async (folder) => new PgliteDatabase(await PGlite.create({ dataDir: folder, extensions: extensionsFor(indexed), parsers }), folder),
          log: (line) => console.error(line),
        });
      }
      const db = await PGlite.create({
        dataDir,
        extensions: options.pgvector === false ? {} : extensionsFor(indexed),
        parsers,
      });
      return new PgliteDatabase(db, options.dataDir ?? 'memory://', release);
    } catch (error) {
      await release?.();
      throw error;
    }
  }

  /**
   * A folder opened with the PGlite of stores made before this release (PostgreSQL 17), without
   * its lock: only to copy it (store/pglite-upgrade.ts), and in tests to make such a store.
   */
  static async openPostgres17(folder: string, options: { bm25Index?: boolean } = {}): Promise<PgliteDatabase> {
    const indexed = options.bm25Index ?? existsSync(join(folder, BM25_INDEX_MARKER));
    // The PGlite of stores made before this release, loaded only when one is met: not at every start.
    const [{ PGlite: PGlite17 }, { vector: vector17 }, { pg_textsearch: pg_textsearch17 }] = await Promise.all([
      import('pglite-pg17'),
      import('pglite-pg17/vector'),
      import('pglite-pg17/pg_textsearch'),
    ]);
    const old = await PGlite17.create({
      dataDir: folder,
      // pg_textsearch only where the store has its index (needed to read it) or is to get one
      extensions: indexed ? { vector: vector17, pg_textsearch: pg_textsearch17 } : { vector: vector17 },
      parsers,
    });
    // The same query API, from another build of it.
    return new PgliteDatabase(old as unknown as PGlite, folder);
  }

  /** COPY … TO '/dev/blob': the rows as PGlite hands them back. */
  async copyOut(sql: string): Promise<Blob> {
    return this.use(async () => {
      this.statements.add();
      const { blob } = await this.db.query(sql);
      if (!blob) throw new Error(`copyOut: no blob came back from ${sql}`);
      return blob;
    });
  }

  /** COPY … FROM '/dev/blob', from a blob. Returns the rows copied. */
  async copyIn(sql: string, blob: Blob): Promise<number> {
    return this.use(async () => {
      this.statements.add();
      return (await this.db.query(sql, [], { blob })).affectedRows ?? 0;
    });
  }

  /**
   * Binary, as on PostgreSQL (vectorBinary): PGlite parses a 512-d vector's text form in
   * WebAssembly, ≈ 0.5 ms a statement against ≈ 0.05 ms for the binary (a scratch loop of
   * `SELECT $1::vector <#> $1::vector`, 2 cores). Sent with binaryOptions.
   */
  vectorParam(vector: Float32Array): Buffer {
    return vectorBinary(vector);
  }

  /** pgvector's type oid in this store, found once (the extension comes with the first migration). */
  private vectorType?: Promise<number | undefined>;

  /**
   * A statement with a binary parameter (a vectorParam, or the embed step's float4Array) needs a
   * serializer that hands PGlite the bytes as they are: without one, PGlite stringifies a value of
   * a type it has no serializer for, as pgvector's `vector` is. A Uint8Array is then sent in binary
   * format and the server reads it with the type's binary input (vector_recv, array_recv).
   */
  private async binaryOptions(params: readonly unknown[], run: PGlite['query']): Promise<QueryOptions | undefined> {
    if (!params.some((p) => p instanceof Uint8Array)) return undefined;
    this.vectorType ??= run<{ oid: number }>(`SELECT oid::int AS oid FROM pg_type WHERE typname = 'vector'`).then((r) => r.rows[0]?.oid);
    const oid = await this.vectorType;
    return oid === undefined ? undefined : { serializers: { [oid]: (value: unknown) => value as string } };
  }

  async query<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return this.use(async () => {
      this.statements.add();
      await letLoopTurn();
      const result = await this.db.query<T>(sql, params as unknown[], await this.binaryOptions(params, this.db.query.bind(this.db)));
      return result.rows;
    });
  }

  async exec(sql: string): Promise<void> {
    return this.use(async () => {
      this.statements.add();
      await letLoopTurn();
      await this.db.exec(sql);
    });
  }

  async queryWithSettings<T>(settings: Record<string, string>, sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const key = JSON.stringify(settings);
    if (Object.keys(settings).length > 0 && this.applied !== key) {
      const set = settingsStatement(settings);
      await this.query(set.sql, set.params);
      this.applied = key;
    }
    return this.query<T>(sql, params);
  }

  async transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const counter = this.statements;
    const binary = this.binaryOptions.bind(this);
    const run = () =>
      this.db.transaction(async (tx) => {
        const queryable: Queryable = {
          async query<R>(sql: string, params: readonly unknown[] = []): Promise<R[]> {
            counter.add();
            await letLoopTurn();
            // inside the transaction: the oid lookup, if still to do, must run on it (PGlite holds one connection)
            const result = await tx.query<R>(sql, params as unknown[], await binary(params, tx.query.bind(tx) as PGlite['query']));
            return result.rows;
          },
          async exec(sql: string): Promise<void> {
            counter.add();
            await letLoopTurn();
            await tx.exec(sql);
          },
        };
        return fn(queryable);
      });
    return this.use(run);
  }

  /**
   * Counts the call in flight for close(), which waits for them: a statement that reaches PGlite
   * once it is closing never returns and keeps the thread busy (no signal handled, the process
   * alive with its lock released). Refused once close() has begun.
   */
  private async use<T>(work: () => Promise<T>): Promise<T> {
    if (this.closing) throw Object.assign(new Error('the database is closed: the server is shutting down'), { code: '57P01' });
    this.active++;
    try {
      return await work();
    } finally {
      if (--this.active === 0) this.idle?.();
    }
  }

  /**
   * Refuses new statements, lets those in flight finish (an ingest's transaction still running
   * after its request was cut commits or rolls back whole), closes PGlite, and releases the lock
   * last, once nothing can write to the folder.
   */
  async close(): Promise<void> {
    this.closing = true;
    if (this.active > 0) await new Promise<void>((resolve) => (this.idle = resolve));
    await this.prisma.$disconnect();
    await this.db.close();
    await this.release?.();
  }
}
