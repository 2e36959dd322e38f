import type { SearchInput } from '../types';
import type { Params } from './params';

/**
 * The documents of CTE `docs` (document_id, document_score) whose passages stage 2 scores under
 * a passage budget: in stage 1's order, each document whole, while the passages taken before it
 * number fewer than the budget (so the first always). Stage 2's cost is its passages: on a corpus
 * of few long documents (the Factbook demo: 261 documents, 162 passages each) k1 = 100 documents
 * are 38 % of the corpus, scored vector by vector. A document's passage count is its last ordinal
 * + 1 (ordinals run 0..n−1 in a document), one index descent each; Citus, which does not push a
 * correlated LIMIT down, groups the join instead (same counts).
 */
export function budgetedDocuments(s: SearchInput, p: Params, docs: string, budget: number): string {
  const counts = s.distributed
    ? `SELECT d.document_id, d.document_score, max(ps.ordinal) + 1 AS passages
        FROM ${docs} d JOIN passages ps ON ps.document_id = d.document_id GROUP BY d.document_id, d.document_score`
    : `SELECT d.document_id, d.document_score, coalesce(n.passages, 0) AS passages FROM ${docs} d
        LEFT JOIN LATERAL (SELECT ps.ordinal + 1 AS passages FROM passages ps WHERE ps.document_id = d.document_id ORDER BY ps.ordinal DESC LIMIT 1) n ON true`;
  return `SELECT document_id FROM (
      SELECT document_id, sum(passages) OVER (ORDER BY document_score DESC, document_id ROWS UNBOUNDED PRECEDING) - passages AS before
      FROM (${counts}) c) b
    WHERE before < ${p.add(budget)}`;
}
