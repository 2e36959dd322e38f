import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths';

export interface Migration {
  version: string;
  sql: string;
  checksum: string;
  /** Checksums a store may have recorded for this file: its own, and its text's before a comment was reworded (REWORDED). */
  accepted: string[];
}

/**
 * Files whose comments were reworded after stores applied them, with the checksum of the text
 * they were applied with: the statements are the same, so those stores are not refused. A change
 * to a statement still needs a new migration.
 */
const REWORDED: Record<string, string> = {
  '0011_summary_pieces': 'ebb0955b42ff3d16b7f4dcfc29c81259ec29a2d9b168b0a84c8bb7b0539c8088',
  '0012_bulk_ingest': '7833af3cf0d1d29817966623e6a217448720b4c73c877ef7ba2415c79d4bae2e',
  '0013_bm25_concurrent_stats': 'd85d159aa87fa4e2cbd6eeff7702a955538c9048b725eacdf0bf09c4c4446246',
  '0015_retrieval_settings': '09575685f4cc39d6eeb4933cb6fe2d74708e82d55e83ed1accf66338c46e08c2',
  '0016_tune_runs': 'e7afbf417514198e4f2dd109574afb3039df7f877d62f8404ed3a32e0635f8e7',
  '0017_ingest_jobs': '3c413a92dcb1945db627dbb54d33777a9c1e01cce38d02c3556af2a6f23f9be3',
  '0018_sentence_embeddings': '9995e6cc84e3565600c8312dc23fccd0441bb15d9f3f1a46b255df1acd19af34',
  '0019_sentence_spans': 'e71e82103245394848406a9d1387adc93947965b7c156fc76fab81f6b16401b8',
  '0020_lexeme_collation_c': '92e0178600565a1f01afa198b80cc7afd3aeeb7c94f8c4cae43db24b646ae183',
  '0021_passage_ids_by_document': '6d1cd7ce015ac9e3359532316aca047004689b9e90b24211513652b3d6411bfc',
  '0022_leaner_ingest': 'aa4f73c6f1e0c5c108e217ea08f86c4edd9989ee23695d92db4929f5b5a12f76',
  '0023_deferred_postings_indexes': '24a10f57e169a64b98bb4e46cdee6c869290e246cba211e37af1b62dca8d3aa5',
};

export class MigrationError extends Error {}

export function migrationsDir(): string {
  return join(packageRoot(), 'migrations');
}

/**
 * Ordered SQL files `NNNN_name.sql` of a folder; the file name without extension, after `prefix`,
 * is the version (the Citus step's files live in migrations/citus and are recorded as citus/NNNN_name).
 */
export function loadMigrations(dir = migrationsDir(), prefix = ''): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const sql = readFileSync(join(dir, file), 'utf8');
      const version = prefix + file.replace(/\.sql$/, '');
      const checksum = createHash('sha256').update(sql).digest('hex');
      return { version, sql, checksum, accepted: [checksum, ...(REWORDED[version] ? [REWORDED[version]] : [])] };
    });
}

/**
 * A script's statements, one by one: Citus forwards some utility commands to the workers as the
 * client's query text, so a whole script sent at once reaches a worker as several commands, which
 * it refuses. Splits on semicolons outside quotes, dollar-quoted bodies and comments.
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let start = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      i = end < 0 ? sql.length : end + 1;
    } else if (c === '$') {
      const tag = /^\$[A-Za-z_]*\$/.exec(sql.slice(i));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end < 0 ? sql.length : end + tag[0].length;
      } else i++;
    } else if (c === ';') {
      out.push(sql.slice(start, i + 1));
      start = ++i;
    } else i++;
  }
  out.push(sql.slice(start));
  // Drop pieces that hold only whitespace and comments.
  return out.filter((s) => s.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() !== '');
}
