import type { Database, Queryable } from './db';
import { indexDefinitions, quoteIdentifier as quote } from './index-definitions';

/**
 * A set-based rebuild of every BM25 posting and statistic (migration 0007's tables) from the
 * stored rows, for large loads and repairs. The triggers keep the tables right row batch by row
 * batch, which costs ≈ 2 ms a passage and slows as the postings B-trees grow (bench:bm25: a 1M
 * passage load did not finish in 30 minutes). Here the postings are written once, into new tables
 * without indexes, and the indexes are then built by sorting: the same rows and statistics as the
 * triggers would leave (test/bm25-rebuild.test.ts compares them).
 *
 * The new tables are built beside the live ones and swapped in at the end (drop the old, rename
 * the new, with the same index and constraint names), all in one transaction:
 * - lexical queries keep answering from the old tables (old statistics) while it builds, and wait
 *   only for the swap, a few catalog changes; the swap asks for its locks with a short
 *   lock_timeout and tries again, so a reader is never held up long and never deadlocks with it;
 * - writers (ingest, delete) wait for the whole rebuild (documents and passages are locked), since
 *   a change they made to the old tables meanwhile would be lost in the swap; the rebuild then
 *   equals what the triggers would have maintained, and they go on against the new tables.
 *
 * Differences from the trigger path, both by design: `impact` (only an ordering hint for bounded
 * candidate generation) is computed with the final average lengths, not those at write time; and
 * terms whose document frequency fell to 0 are not kept. Statistics come out as one row per level
 * and term (slot 0, migration 0013). Not on Citus, whose shards keep their own statistics
 * (store/citus.ts).
 */
export interface Bm25RebuildResult {
  /** Passages given their full-text vector here (they had none). */
  indexed: number;
  passages: number;
  documents: number;
  passagePostings: number;
  documentPostings: number;
  terms: number;
}

export interface Bm25RebuildOptions {
  workMem?: string;
  /** How long the swap may keep trying for its locks before the rebuild gives up (ms). */
  swapWaitMs?: number;
  /** Called once the new tables are built, before the swap (tests hold the rebuild here). */
  beforeSwap?: () => Promise<void>;
  /** Called with the swap's locks held, before the tables change (tests queue a reader here). */
  duringSwap?: () => Promise<void>;
}

/** Every table the rebuild replaces; the swap locks them in this order. */
const TABLES = ['passage_postings', 'document_postings', 'document_lengths', 'bm25_terms', 'bm25_stats'];
const SHADOW = '_rebuild';
const shadow = (table: string) => quote(table + SHADOW);
/** The English analysis and literature k1 / b of migration 0007's impact formula. */
const IMPACT_K1 = 1.2;
const IMPACT_B = 0.75;
/** Each try at the swap's locks waits at most this long: readers queued behind it wait no longer. */
const SWAP_LOCK_TIMEOUT_MS = 200;

export async function rebuildBm25(db: Database, options: Bm25RebuildOptions = {}): Promise<Bm25RebuildResult> {
  if (db.distributed === 'citus') {
    throw new Error('the BM25 rebuild is not on Citus: each shard group keeps its own BM25 statistics through its triggers');
  }
  const result = await db.transaction(async (tx) => {
    // Writers queue behind this (ingest, delete) until the swap has committed; readers go on.
    await tx.exec('LOCK TABLE documents, passages IN SHARE ROW EXCLUSIVE MODE');
    const workMem = options.workMem ?? '256MB';
    await tx.query(`SELECT set_config('work_mem', $1, true), set_config('maintenance_work_mem', $1, true)`, [workMem]);

    // The full-text step without the update trigger: its postings are about to be rebuilt anyway.
    await tx.exec('ALTER TABLE passages DISABLE TRIGGER passages_bm25_update');
    const [{ indexed }] = await tx.query<{ indexed: number }>(
      `WITH indexed AS (
         UPDATE passages SET search = to_tsvector('english'::regconfig, passage_search_text(title_path, text))
         WHERE search IS NULL RETURNING 1)
       SELECT count(*)::int AS indexed FROM indexed`,
    );
    await tx.exec('ALTER TABLE passages ENABLE TRIGGER passages_bm25_update');

    // New tables shaped as the live ones (columns, defaults, checks), without their indexes yet.
    const indexes = await shadowIndexes(tx);
    for (const t of TABLES) await tx.exec(`CREATE TABLE ${shadow(t)} (LIKE ${quote(t)} INCLUDING ALL EXCLUDING INDEXES)`);
    await build(tx);
    for (const index of indexes) await tx.exec(index.build);
    // Planner statistics before the tables go live (ANALYZE may run in a transaction; VACUUM may not).
    await tx.exec(`ANALYZE ${TABLES.map(shadow).join(', ')}`);
    await options.beforeSwap?.();

    await lockForSwap(tx, options.swapWaitMs ?? 60_000);
    await options.duringSwap?.();
    // plpgsql (the triggers' functions) and every reader name these tables at run time, so the
    // renamed tables take the old ones' place for them; a reader that waited on the old table
    // looks the name up again once it gets its lock.
    await tx.exec(`DROP TABLE ${TABLES.map(quote).join(', ')}`);
    for (const t of TABLES) await tx.exec(`ALTER TABLE ${shadow(t)} RENAME TO ${quote(t)}`);
    for (const index of indexes) await tx.exec(index.rename);

    const [counts] = await tx.query<Omit<Bm25RebuildResult, 'indexed'>>(
      `SELECT (SELECT coalesce(sum(items), 0)::int FROM bm25_stats WHERE level = 'p') AS passages,
              (SELECT coalesce(sum(items), 0)::int FROM bm25_stats WHERE level = 'd') AS documents,
              (SELECT count(*)::int FROM passage_postings) AS "passagePostings",
              (SELECT count(*)::int FROM document_postings) AS "documentPostings",
              (SELECT count(*)::int FROM bm25_terms) AS terms`,
    );
    return { indexed, ...counts };
  });
  // Outside the transaction: the visibility map index-only scans need.
  await db.exec(`VACUUM ANALYZE ${TABLES.join(', ')}`);
  return result;
}

/** Fills the new tables (`<table>_rebuild`) from the stored passages and documents. */
async function build(tx: Queryable): Promise<void> {
  const [postings, documentPostings, lengths, terms, stats] = TABLES.map(shadow);
  await tx.exec(`INSERT INTO ${stats} (level) VALUES ('p'), ('d')`);
  // Passages: lengths and statistics first, then every posting with its impact at the final avgdl.
  // Sums in float8: real sums over a whole corpus round (a per-batch sum in the triggers does not).
  await tx.exec(`
    CREATE TEMP TABLE bm25_rebuild_passages ON COMMIT DROP AS
      SELECT p.id, p.document_id, sum(coalesce(array_length(t.positions, 1), 1))::real AS length
      FROM passages p, unnest(p.search) t WHERE p.search IS NOT NULL GROUP BY p.id, p.document_id`);
  await tx.exec(`
    UPDATE ${stats} s SET items = a.n, total_length = a.total, total_summary = 0
    FROM (SELECT count(*) AS n, coalesce(sum(length::float8), 0) AS total FROM bm25_rebuild_passages) a
    WHERE s.level = 'p'`);
  await tx.exec(`
    INSERT INTO ${postings} (lexeme, document_id, passage_id, tf, length, impact)
      SELECT t.lexeme, r.document_id, r.id, t.tf, r.length,
             t.tf / (t.tf + ${IMPACT_K1} * (${1 - IMPACT_B} + ${IMPACT_B} * r.length / greatest(s.total_length / greatest(s.items, 1), 1)))
      FROM bm25_rebuild_passages r JOIN passages p ON p.id = r.id
      CROSS JOIN LATERAL (SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1)::real AS tf FROM unnest(p.search) u) t
      CROSS JOIN ${stats} s WHERE s.level = 'p'`);
  await tx.exec(`INSERT INTO ${terms} (level, lexeme, df) SELECT 'p', lexeme, count(*) FROM ${postings} GROUP BY lexeme`);

  // Documents (BM25F): the full text is the sum of their passages' postings, the summary its own analysis.
  await tx.exec(`
    CREATE TEMP TABLE bm25_rebuild_documents ON COMMIT DROP AS
      SELECT document_id, lexeme, sum(tf_body)::real AS tf_body, sum(tf_summary)::real AS tf_summary FROM (
        SELECT document_id, lexeme, tf AS tf_body, 0::real AS tf_summary FROM ${postings}
        UNION ALL
        SELECT d.id, t.lexeme, 0::real, coalesce(array_length(t.positions, 1), 1)::real
          FROM documents d, unnest(to_tsvector('english'::regconfig, d.summary)) t
      ) x GROUP BY document_id, lexeme`);
  await tx.exec(`
    INSERT INTO ${lengths} (document_id, length_body, length_summary)
      SELECT document_id, sum(tf_body::float8), sum(tf_summary::float8) FROM bm25_rebuild_documents GROUP BY document_id`);
  await tx.exec(`
    UPDATE ${stats} s SET items = a.n, total_length = a.body, total_summary = a.summary
    FROM (SELECT count(*) AS n, coalesce(sum(length_body::float8), 0) AS body, coalesce(sum(length_summary::float8), 0) AS summary
          FROM ${lengths}) a
    WHERE s.level = 'd'`);
  await tx.exec(`INSERT INTO ${terms} (level, lexeme, df) SELECT 'd', lexeme, count(*) FROM bm25_rebuild_documents GROUP BY lexeme`);
  await tx.exec(`
    INSERT INTO ${documentPostings} (lexeme, document_id, tf_body, tf_summary, length_body, length_summary, impact)
      SELECT b.lexeme, b.document_id, b.tf_body, b.tf_summary, l.length_body, l.length_summary,
             (b.tf_body + b.tf_summary) / (b.tf_body + b.tf_summary
               + ${IMPACT_K1} * (${1 - IMPACT_B} + ${IMPACT_B} * (l.length_body + l.length_summary)
                 / greatest((s.total_length + s.total_summary) / greatest(s.items, 1), 1)))
      FROM bm25_rebuild_documents b JOIN ${lengths} l USING (document_id) CROSS JOIN ${stats} s WHERE s.level = 'd'`);
}

/**
 * The live tables' indexes and key constraints (store/index-definitions.ts): a statement that
 * builds each on the new table under a temporary name, and one that gives it the live name once
 * the old table is gone.
 */
async function shadowIndexes(tx: Queryable): Promise<{ build: string; rename: string }[]> {
  const rows = await indexDefinitions(tx, TABLES);
  return rows.map((r) => {
    const temporary = quote(r.index_name + SHADOW);
    if (r.constraint_name) {
      return {
        build: `ALTER TABLE ${shadow(r.table_name)} ADD CONSTRAINT ${temporary} ${r.definition}`,
        rename: `ALTER TABLE ${quote(r.table_name)} RENAME CONSTRAINT ${temporary} TO ${quote(r.constraint_name)}`,
      };
    }
    // CREATE [UNIQUE] INDEX name ON [ONLY] schema.table USING …: the same index on the new table.
    const m = /^(CREATE (?:UNIQUE )?INDEX )\S+( ON (?:ONLY )?)\S+( USING [\s\S]*)$/.exec(r.definition);
    if (!m) throw new Error(`unexpected index definition: ${r.definition}`);
    return {
      build: `${m[1]}${temporary}${m[2]}${shadow(r.table_name)}${m[3]}`,
      rename: `ALTER INDEX ${temporary} RENAME TO ${quote(r.index_name)}`,
    };
  });
}

/**
 * Takes the swap's locks on every live table, each try waiting at most SWAP_LOCK_TIMEOUT_MS for
 * the readers holding them (in a savepoint, so a failed try gives back what it had). A reader that
 * locked one table before the swap and then waits on another it holds would otherwise deadlock
 * with it; a lock_timeout below deadlock_timeout (1 s) makes the swap the one that steps back.
 */
async function lockForSwap(tx: Queryable, waitMs: number): Promise<void> {
  const [{ previous }] = await tx.query<{ previous: string }>(`SELECT current_setting('lock_timeout') AS previous`);
  await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [`${SWAP_LOCK_TIMEOUT_MS}ms`]);
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    await tx.exec('SAVEPOINT bm25_swap');
    try {
      await tx.exec(`LOCK TABLE ${TABLES.map(quote).join(', ')} IN ACCESS EXCLUSIVE MODE`);
      await tx.exec('RELEASE SAVEPOINT bm25_swap');
      break;
    } catch (error) {
      await tx.exec('ROLLBACK TO SAVEPOINT bm25_swap');
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE || Date.now() > deadline) throw error;
      // Let the queued readers through before trying again.
      await new Promise((resolve) => setTimeout(resolve, Math.min(50 * attempt, 500)));
    }
  }
  await tx.query(`SELECT set_config('lock_timeout', $1, true)`, [previous]);
}

/** SQLSTATE of a lock_timeout. */
const LOCK_NOT_AVAILABLE = '55P03';
