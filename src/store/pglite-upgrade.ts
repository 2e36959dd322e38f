import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BM25_INDEX, BM25_INDEX_MARKER } from './bm25-index';
import { LOCK_NAME } from './data-lock';
import type { Database } from './db';
import { buildDeferredIndexes } from './deferred-indexes';
import { migrate } from './migrate';

/**
 * A data folder made by an earlier release, whose PGlite was PostgreSQL 17, moved to this one's
 * (PostgreSQL 18). PostgreSQL cannot open another major version's files, and PGlite has no
 * pg_upgrade, so this is a logical copy: the old folder is opened with the PGlite it was made
 * with (the `pglite-pg17` dependency), brought to the latest migration, and every table is copied
 * in binary COPY into a new store made by the same migrations. The old files are kept in the
 * folder (`dhr-upgrade.pg17` in it); delete them once the store has been checked.
 *
 * The new store is built in the folder (`dhr-upgrade.pg18`) and only then moved in, entry by
 * entry (the folder itself may be a mount point, which cannot be renamed), recorded in a phase
 * file inside the folder, so that a process killed at any point resumes where it stopped.
 */

/** The major version a data folder's files are (PG_VERSION), or undefined for a new folder. */
export function pgMajorOf(dataDir: string): number | undefined {
  const file = join(dataDir, 'PG_VERSION');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : undefined;
}

/** Written inside the folder while entries move: 'out' (old files to the backup), then 'in'. */
export const UPGRADE_PHASE = 'dhr-upgrade.phase';
/** Written into the new store once its copy is complete (before that it is rebuilt from scratch). */
export const UPGRADE_COMPLETE = 'dhr-upgrade.complete';
/**
 * Inside the folder, not beside it: the folder may be a mount point (a container's volume), where
 * a sibling is another file system and a rename to it fails. PostgreSQL ignores them there.
 */
export const UPGRADE_BUILDING = 'dhr-upgrade.pg18';
export const UPGRADE_BACKUP = 'dhr-upgrade.pg17';

/** Entries of the folder that belong to the product, not to PostgreSQL: they stay where they are. */
const kept = (name: string) =>
  name.startsWith(LOCK_NAME) || name === UPGRADE_PHASE || name === BM25_INDEX_MARKER || name === UPGRADE_BUILDING || name === UPGRADE_BACKUP;

/** A PGlite store that can COPY to and from a blob (PGlite's /dev/blob). */
export interface CopyableDatabase extends Database {
  copyOut(sql: string): Promise<Blob>;
  /** Returns the rows copied in. */
  copyIn(sql: string, blob: Blob): Promise<number>;
}

/** What the upgrade needs from the PGlite layer (store/pglite.ts), passed in to keep imports one-way. */
export interface UpgradeEngines {
  /** The folder opened with PostgreSQL 17's PGlite, pgvector and pg_textsearch loaded. */
  openOld(dataDir: string): Promise<CopyableDatabase>;
  /** A new folder opened with this release's PGlite. */
  openNew(dataDir: string): Promise<CopyableDatabase>;
  log?: (line: string) => void;
  /** Heap blocks of a table one COPY step carries (default COPY_BLOCKS). */
  blocksPerCopy?: number;
}

/**
 * A table is copied a range of its heap blocks at a time (a TID range scan), not whole: each step
 * is held in memory twice (the old PGlite's blob, then the new one's), and a PGlite's WebAssembly
 * memory is bounded (4 GiB at most), which one table of a large store's vectors outgrows. 1,024
 * blocks are 8 MiB of rows, plus the values stored out of line (TOAST) that they carry.
 */
export const COPY_BLOCKS = 1024;

export interface UpgradeReport {
  tables: number;
  rows: number;
  /** COPY steps taken (at least one a table). */
  steps: number;
  backup: string;
}

/**
 * Upgrades a PostgreSQL 17 folder in place (the caller holds its lock). Returns undefined when
 * the folder needs none.
 */
export async function upgradePg17Folder(dataDir: string, engines: UpgradeEngines): Promise<UpgradeReport | undefined> {
  const building = join(dataDir, UPGRADE_BUILDING);
  const backup = join(dataDir, UPGRADE_BACKUP);
  const phase = existsSync(join(dataDir, UPGRADE_PHASE)) ? readFileSync(join(dataDir, UPGRADE_PHASE), 'utf8').trim() : undefined;
  if (phase === undefined && pgMajorOf(dataDir) !== 17) return undefined;
  const log = engines.log ?? (() => undefined);
  let report: UpgradeReport = { tables: 0, rows: 0, steps: 0, backup };
  if (phase === undefined) {
    if (!existsSync(join(building, UPGRADE_COMPLETE))) {
      rmSync(building, { recursive: true, force: true });
      log(`dhr: ${dataDir} was made by PostgreSQL 17 (an earlier release's PGlite): copying it into PostgreSQL 18 at ${building}…`);
      report = { ...(await copyStore(dataDir, building, engines)), backup };
      writeFileSync(join(building, UPGRADE_COMPLETE), `${JSON.stringify(report)}\n`);
    }
    writeFileSync(join(dataDir, UPGRADE_PHASE), 'out\n');
  }
  if (phase !== 'in') {
    mkdirSync(backup, { recursive: true });
    moveEntries(dataDir, backup);
    writeFileSync(join(dataDir, UPGRADE_PHASE), 'in\n');
  }
  moveEntries(building, dataDir, (name) => name === UPGRADE_COMPLETE);
  rmSync(join(dataDir, UPGRADE_PHASE));
  rmSync(building, { recursive: true, force: true });
  log(`dhr: ${dataDir} is now PostgreSQL 18; the PostgreSQL 17 files are kept in ${backup} (delete them once the store is checked)`);
  return report;
}

/** Moves every entry of `from` into `to` but the product's own, PG_VERSION last (it says the move is done). */
function moveEntries(from: string, to: string, skip: (name: string) => boolean = () => false): void {
  const names = readdirSync(from).filter((name) => !kept(name) && !skip(name));
  for (const name of [...names.filter((n) => n !== 'PG_VERSION'), ...names.filter((n) => n === 'PG_VERSION')]) {
    rmSync(join(to, name), { recursive: true, force: true });
    renameSync(join(from, name), join(to, name));
  }
}

type Copied = Omit<UpgradeReport, 'backup'>;

interface Column {
  table: string;
  column: string;
}

async function copyStore(dataDir: string, target: string, engines: UpgradeEngines): Promise<Copied> {
  const old = await engines.openOld(dataDir);
  try {
    // Same schema on both sides: the old store's pending migrations, and what a bulk ingest that
    // died left unbuilt, first.
    await migrate(old);
    await buildDeferredIndexes(old);
    const fresh = await engines.openNew(target);
    try {
      await migrate(fresh);
      return await copyTables(old, fresh, engines.blocksPerCopy ?? COPY_BLOCKS);
    } finally {
      await fresh.close();
    }
  } finally {
    await old.close();
  }
}

async function copyTables(old: CopyableDatabase, fresh: CopyableDatabase, blocksPerCopy: number): Promise<Copied> {
  const tableNames = (db: Database) =>
    db.query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`).then((r) => r.map((t) => t.name));
  const tables = await tableNames(fresh);
  const oldTables = new Set(await tableNames(old));
  // Indexes other than constraints' are built once after the copy, not row by row (HNSW above
  // all): the old store's (with those made at run time, one HNSW index per model), and those only
  // the new one has (the BM25 index, where the old store had none).
  const indexesOf = (db: Database) =>
    db.query<{ name: string; definition: string }>(
      `SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
        WHERE i.schemaname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    );
  const freshIndexes = await indexesOf(fresh);
  const oldIndexes = (await indexesOf(old)).filter((i) => tables.some((t) => i.definition.includes(` ON public.${t} `)));
  const indexes = [...oldIndexes, ...freshIndexes.filter((i) => !oldIndexes.some((o) => o.name === i.name))];
  const columns = await fresh.query<Column>(
    `SELECT c.relname AS table, a.attname AS column FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
      ORDER BY c.relname, a.attnum`,
  );
  // No transaction: the new folder is scratch until the copy is complete (a copy that dies is
  // made again from the start). Rows as they were: no foreign-key checks or triggers.
  await fresh.exec(`SET session_replication_role = replica`);
  for (const index of freshIndexes) await fresh.exec(`DROP INDEX ${quote(index.name)}`);
  await fresh.exec(`TRUNCATE ${tables.map(quote).join(', ')}`);
  let rows = 0;
  let copied = 0;
  let steps = 0;
  for (const table of tables) {
    if (!oldTables.has(table)) continue;
    const list = columns
      .filter((c) => c.table === table)
      .map((c) => quote(c.column))
      .join(', ');
    // Nothing writes the old store meanwhile (its lock is held), so its size now is its size.
    const [{ blocks }] = await old.query<{ blocks: number }>(`SELECT (pg_relation_size($1::regclass) / current_setting('block_size')::int)::int AS blocks`, [
      quote(table),
    ]);
    for (let from = 0; from === 0 || from < blocks; from += blocksPerCopy) {
      // The last range is open-ended, so no row can fall past it.
      const upTo = from + blocksPerCopy < blocks ? ` AND ctid < '(${from + blocksPerCopy},0)'::tid` : '';
      // Binary: a vector is not printed and parsed again; the formats are the same in 17 and 18.
      const blob = await old.copyOut(`COPY (SELECT ${list} FROM ${quote(table)} WHERE ctid >= '(${from},0)'::tid${upTo}) TO '/dev/blob' WITH (FORMAT binary)`);
      rows += await fresh.copyIn(`COPY ${quote(table)} (${list}) FROM '/dev/blob' WITH (FORMAT binary)`, blob);
      steps++;
    }
    copied++;
  }
  // A store made without the BM25 index gets it: its text, as migration 0026 writes it.
  if (tables.includes(BM25_INDEX.table) && !oldTables.has(BM25_INDEX.table)) {
    await fresh.exec(
      `INSERT INTO ${BM25_INDEX.table} (passage_id, document_id, search_text)
         SELECT id, document_id, passage_search_text(title_path, text) FROM passages WHERE search IS NOT NULL`,
    );
  }
  for (const index of indexes) await fresh.exec(index.definition);
  // Identity columns go on from where they were.
  const sequences = await old.query<{ name: string; value: string }>(
    `SELECT sequencename AS name, last_value::text AS value FROM pg_sequences WHERE schemaname = 'public' AND last_value IS NOT NULL`,
  );
  for (const s of sequences) await fresh.query(`SELECT setval($1::regclass, $2::bigint)`, [quote(s.name), s.value]);
  await fresh.exec(`SET session_replication_role = DEFAULT`);
  return { tables: copied, rows, steps };
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
