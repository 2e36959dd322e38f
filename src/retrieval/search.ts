import { CITUS_SEARCH_SETTINGS, onShards } from '../store/citus';
import { bm25IndexOf } from '../store/bm25-index';
import { meanPassagesPerDocument } from '../store/corpus-shape';
import type { Database } from '../store/db';
import { searchStatement, type VectorSearch } from './sql';
import { DOCUMENT_ROW, PASSAGE_ROW, type DocumentRow, type PassageRow } from '../store/rows';
import { fromJson, type JsonRow } from './statements/rows';
import type { ScoredDocumentRow, ScoredPassageRow, SearchResult } from './types';

/**
 * Runs a mode's statement with its HNSW settings. The settings go to the connection only when
 * they changed since its last search, so a search is usually one round trip (bench:retrieve
 * measured 0.4–1.6 ms saved at 1M against BEGIN, SET LOCAL, statement, COMMIT).
 */
export async function search(db: Database, s: VectorSearch): Promise<SearchResult> {
  const distributed = db.distributed === 'citus';
  const bm25Index = s.bm25Index !== false && (await bm25IndexOf(db));
  const meanPassages = s.mode === 'HYBRID_HIERARCHICAL' && !s.exact && !distributed ? await meanPassagesPerDocument(db) : undefined;
  const statement = searchStatement({ ...s, distributed, bm25Index, meanPassages }, db.vectorParam?.bind(db));
  const settings = distributed ? { ...statement.settings, ...CITUS_SEARCH_SETTINGS } : statement.settings;
  const [row] = await onShards(db, () =>
    db.queryWithSettings<{
      passages: ScoredPassageRow[];
      documents: ScoredDocumentRow[];
      question_terms?: number;
      passage_rows?: JsonRow<PassageRow>[];
      document_rows?: JsonRow<DocumentRow>[];
    }>(settings, statement.sql, statement.params),
  );
  return {
    passages: row.passages,
    documents: row.documents,
    questionTerms: row.question_terms ?? null,
    passageRows: row.passage_rows?.map((p) => fromJson(PASSAGE_ROW, p)),
    documentRows: row.document_rows?.map((d) => fromJson(DOCUMENT_ROW, d)),
  };
}
