import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { badUserInput } from '../errors';
import type { Database } from '../store/db';
import type { PseudoQuestion } from '../tuning/pseudo-questions';
import { applyChoice, reportRecord } from '../tuning/runs';
import { tune } from '../tuning/tune';
import { loadEmbedding } from './embed';
import { onStore } from './answering';
import { ProgressBar } from './progress';
import { printStored, printTuneReport, type TuneCommandOptions } from './tune-report';

/** Labelled questions from a file: each line a question and the passages (by id) or documents (by key) that answer it. */
async function readLabelled(db: Database, file: string): Promise<PseudoQuestion[]> {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim());
  const parsed = lines.flatMap((line, i) => {
    if (!line) return [];
    let row: { question?: unknown; passageIds?: unknown; documentKeys?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      throw badUserInput(`${file} line ${i + 1} is not JSON`, 'questions');
    }
    const ids = Array.isArray(row.passageIds) ? row.passageIds.filter((x): x is number => Number.isInteger(x)) : [];
    const keys = Array.isArray(row.documentKeys) ? row.documentKeys.filter((x): x is string => typeof x === 'string') : [];
    if (typeof row.question !== 'string' || !row.question.trim() || ids.length + keys.length === 0) {
      throw badUserInput(`${file} line ${i + 1} needs a question and passageIds or documentKeys`, 'questions');
    }
    return [{ question: row.question, ids, keys }];
  });
  const allKeys = [...new Set(parsed.flatMap((p) => p.keys))];
  const byKey = new Map(
    (await db.query<{ key: string; id: number }>('SELECT key, id FROM documents WHERE key = ANY($1::text[])', [allKeys])).map((r) => [r.key, r.id]),
  );
  return parsed.map((p) => {
    const passages = new Set(p.ids);
    const documents = new Set(p.keys.map((k) => byKey.get(k)).filter((id): id is number => id !== undefined));
    return { kind: 'feedback' as const, question: p.question, excluded: [], answers: (k) => passages.has(k.passageId) || documents.has(k.documentId) };
  });
}

/**
 * `dhr tune`: scores a small grid of the mode's parameters on pseudo-questions from the corpus
 * (and labelled ones with --questions) and prints the grid and the choice; with --apply, stores
 * the choice as a new settings version, with the evidence, when it beats the settings in force.
 */
export function tuneCommand(config: Config, o: TuneCommandOptions): Promise<number> {
  return onStore(config, 'tune', async (db) => {
    const labelled = o.questions ? await readLabelled(db, o.questions) : undefined;
    const { models, targets } = await loadEmbedding(db, config);
    try {
      let bar: ProgressBar | undefined;
      const report = await tune(db, targets, {
        mode: o.mode,
        perKind: o.perKind,
        seed: o.seed,
        kinds: o.kinds,
        labelled,
        environment: config.ranking,
        bm25: config.bm25,
        onProgress: (done, total, label) => (bar ??= new ProgressBar(total, 'tune')).update(done, label),
      });
      // The bar's line ends before the report is printed (on a terminal it is redrawn in place).
      bar?.finish();
      // Printed from the record a run through the API stores, so that dhr tune --url prints the same.
      const record = reportRecord(report);
      printTuneReport(record);
      return printStored(record, o.apply, o.apply ? await applyChoice(db, report, o.seed ?? 0) : null);
    } finally {
      await models.close();
    }
  });
}
