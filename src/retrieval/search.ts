import type { Database } from '../store/db';
import { searchStatement } from './sql';
import type { ScoredDocumentRow, ScoredPassageRow, SearchResult, VectorSearch } from './types';

/** Runs a mode's statement in a transaction with its HNSW settings (SET LOCAL: this query only). */
export async function search(db: Database, s: VectorSearch): Promise<SearchResult> {
  const statement = searchStatement(s);
  const [row] = await db.transaction(async (tx) => {
    // All settings in one round trip.
    const settings = Object.entries(statement.settings);
    if (settings.length > 0) {
      await tx.query(`SELECT ${settings.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(', ')}`, settings.flat());
    }
    return tx.query<{ passages: ScoredPassageRow[]; documents: ScoredDocumentRow[] }>(statement.sql, statement.params);
  });
  return { passages: row.passages, documents: row.documents };
}
