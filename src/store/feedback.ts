import { notFound } from '../errors';
import type { Feedback } from '../generated/prisma/client';
import type { Queryable } from './db';
import { columnsOf, selectList } from './rows';

/** A judged (question, passage) pair (migrations/0009_feedback.sql): Prisma's model. */
export type FeedbackRow = Feedback;

export const FEEDBACK_ROW = columnsOf<FeedbackRow>()({
  id: 'int',
  question: 'text',
  passageId: 'int',
  relevant: 'bool',
  createdAt: 'timestamptz',
});

export interface FeedbackInput {
  question: string;
  passageId: number;
  relevant: boolean;
}

const COLUMNS = selectList(FEEDBACK_ROW, '');

/**
 * Stores judgements in one statement; when a passage id names no passage nothing is stored and the
 * error names the first such input (its index, so callers can name a line). Inside a transaction
 * this is one step of an all-or-nothing import.
 */
export async function insertFeedback(
  db: Queryable,
  inputs: readonly FeedbackInput[],
  describe: (index: number) => string = (i) => (inputs.length === 1 ? 'passageId' : `item ${i + 1}`),
): Promise<FeedbackRow[]> {
  if (inputs.length === 0) return [];
  const ids = inputs.map((f) => f.passageId);
  const missing = await db.query<{ n: number }>(
    `SELECT x.n::int AS n FROM unnest($1::int[]) WITH ORDINALITY AS x(id, n)
     WHERE NOT EXISTS (SELECT 1 FROM passages p WHERE p.id = x.id) ORDER BY x.n LIMIT 1`,
    [ids],
  );
  if (missing.length > 0) {
    const i = missing[0].n - 1;
    throw notFound(`${describe(i)}: no passage with id ${inputs[i].passageId}`, 'passageId');
  }
  // The existence check and the insert are two statements: a passage deleted in between fails the
  // foreign key instead, and the insert as a whole is still refused.
  return db.query<FeedbackRow>(
    `INSERT INTO feedback (question, passage_id, relevant)
     SELECT * FROM unnest($1::text[], $2::int[], $3::bool[]) RETURNING ${COLUMNS}`,
    [inputs.map((f) => f.question), ids, inputs.map((f) => f.relevant)],
  );
}

/** A relevant judgement as a training pair's source, with every passage judged relevant to the same question. */
export interface RelevantFeedbackRow {
  id: number;
  question: string;
  passageId: number;
  positives: number[];
  /** Passages whose latest judgement for the same question says not relevant: hard negatives. */
  judgedNegatives: number[];
}

/**
 * The latest judgement of each (question, passage) that says relevant, in id order after `after`:
 * a pair judged twice counts once, and a later "not relevant" withdraws it.
 */
const LATEST_RELEVANT = `f.relevant AND NOT EXISTS (
  SELECT 1 FROM feedback f0 WHERE f0.question = f.question AND f0.passage_id = f.passage_id AND f0.id > f.id)`;

export async function relevantFeedbackPage(db: Queryable, after: number, limit: number): Promise<RelevantFeedbackRow[]> {
  return db.query<RelevantFeedbackRow>(
    `SELECT f.id, f.question, f.passage_id AS "passageId",
            array(SELECT DISTINCT f2.passage_id FROM feedback f2 WHERE f2.question = f.question AND f2.relevant ORDER BY 1) AS positives,
            array(SELECT f3.passage_id FROM feedback f3 WHERE f3.question = f.question AND NOT f3.relevant
                    AND NOT EXISTS (SELECT 1 FROM feedback f4 WHERE f4.question = f3.question AND f4.passage_id = f3.passage_id AND f4.id > f3.id)
                  ORDER BY 1) AS "judgedNegatives"
     FROM feedback f WHERE f.id > $1 AND ${LATEST_RELEVANT} ORDER BY f.id LIMIT $2`,
    [after, limit],
  );
}

export async function countRelevantFeedback(db: Queryable): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM feedback f WHERE ${LATEST_RELEVANT}`);
  return row.n;
}
