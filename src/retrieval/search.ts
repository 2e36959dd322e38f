import type { Database } from '../store/db';
import { searchStatement } from './sql';
import type { ScoredDocumentRow, ScoredPassageRow, SearchResult, VectorSearch } from './types';

/** Runs a mode's statement in a transaction with its HNSW settings (SET LOCAL: this query only). */
export async function search(db: Database, s: VectorSearch): Promise<SearchResult> {
  const statement = searchStatement(s);
  const [row] = await db.transaction(async (tx) => {
    for (const [name, value] of Object.entries(statement.settings)) {
      await tx.query(`SELECT set_config($1, $2, true)`, [name, value]);
    }
    return tx.query<{ passages: ScoredPassageRow[]; documents: ScoredDocumentRow[] }>(statement.sql, statement.params);
  });
  return { passages: row.passages, documents: row.documents };
}
