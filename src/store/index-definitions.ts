import type { Queryable } from './db';

export interface IndexDefinition {
  table_name: string;
  index_name: string;
  /** The key or unique constraint the index backs, if any (it is then dropped and built as the constraint). */
  constraint_name: string | null;
  /** pg_get_constraintdef for a constraint (`PRIMARY KEY (…) INCLUDE (…)`), else pg_get_indexdef (the whole CREATE INDEX). */
  definition: string;
}

/**
 * The indexes and key constraints of `tables` as the catalog defines them, constraints first, so
 * the migrations stay their one definition for whoever builds them again (`dhr rebuild-bm25`'s new
 * tables, a load's deferred postings indexes).
 */
export function indexDefinitions(tx: Queryable, tables: readonly string[]): Promise<IndexDefinition[]> {
  return tx.query<IndexDefinition>(
    `SELECT t.relname AS table_name, i.relname AS index_name, c.conname AS constraint_name,
            CASE WHEN c.oid IS NULL THEN pg_get_indexdef(i.oid) ELSE pg_get_constraintdef(c.oid) END AS definition
     FROM pg_index x
     JOIN pg_class i ON i.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     LEFT JOIN pg_constraint c ON c.conindid = i.oid AND c.conrelid = t.oid
     WHERE t.oid = ANY($1::regclass[])
     ORDER BY t.relname, c.oid IS NULL, i.relname`,
    [tables],
  );
}

/** An identifier quoted for the DDL built from these definitions. */
export const quoteIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;
