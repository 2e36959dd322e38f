import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../paths';

export interface Migration {
  version: string;
  sql: string;
  checksum: string;
}

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
      return { version: prefix + file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
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
