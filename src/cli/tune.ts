import { readFileSync } from 'node:fs';
import type { Config } from '../config';
import { badUserInput, DomainError } from '../errors';
import { enumSpelling } from '../graphql/enum-spelling';
import { checkLabelled, type LabelledQuestionInput } from '../tuning/labelled';
import { QUESTIONS_PER_KIND } from '../tuning/pseudo-questions';
import type { TuneRecord } from '../tuning/runs';
import { ProgressBar } from './progress';
import { asWritten, printStored, printTuneReport, type TuneCommandOptions } from './tune-report';
import { type ServerOptions, withTransport } from './transport';

/** Labelled questions from a JSONL file: each line a question and the passages (by id) or documents (by key) that answer it. */
function readLabelled(file: string): LabelledQuestionInput[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw badUserInput(`cannot read ${file}: ${(error as Error).message}`, 'questions');
  }
  return text.split('\n').flatMap((raw, i) => {
    const line = raw.trim();
    if (!line) return [];
    let row: { question?: unknown; passageIds?: unknown; documentKeys?: unknown };
    try {
      row = JSON.parse(line);
    } catch {
      throw badUserInput(`${file} line ${i + 1} is not JSON`, 'questions');
    }
    const passageIds = Array.isArray(row.passageIds) ? row.passageIds.filter((x): x is number => Number.isInteger(x) && x > 0) : [];
    const documentKeys = Array.isArray(row.documentKeys) ? row.documentKeys.filter((x): x is string => typeof x === 'string') : [];
    const question = { question: typeof row.question === 'string' ? row.question : '', passageIds, documentKeys };
    checkLabelled(question, `${file} line ${i + 1}`);
    return [question];
  });
}

interface TuneRunAnswer {
  id: string;
  status: 'running' | 'succeeded' | 'failed';
  pointsDone: number;
  pointsTotal: number;
  report: TuneRecord | null;
  settingsVersion: number | null;
  error: string | null;
}

const RUN_FIELDS = 'id status pointsDone pointsTotal report settingsVersion error';
/** How often `dhr tune` asks for its run's progress. */
const TUNE_POLL_MS = 500;

/**
 * `dhr tune`, on the store or with --url: starts the tune with tuneRetrievalSettings (its
 * pseudo-questions, the sources `--kinds` names, the labelled questions of `--questions`), which
 * runs it in the background of the process that holds the store (this one, or the server), follows
 * the run (tuneRun) until it ends, drawing its progress, and prints its report and what it stored:
 * a grid of the mode's parameters scored on questions the corpus asks of itself, and the choice,
 * stored as a new settings version with --apply when it beats the settings in force. A run that
 * fails is its message, as a refusal is.
 */
export function tuneCommand(config: Config, o: TuneCommandOptions & ServerOptions): Promise<number> {
  let questions: LabelledQuestionInput[] | undefined;
  try {
    questions = o.questions !== undefined ? readLabelled(o.questions) : undefined;
  } catch (error) {
    // A file this process reads: refused alike on the store and with --url (no server refused it).
    if (!(error instanceof DomainError)) throw error;
    console.error(`tune: ${error.message}`);
    return Promise.resolve(1);
  }
  return withTransport(
    config,
    o,
    'tune',
    async (t) => {
      const { tuneRetrievalSettings: started } = await t.request<{ tuneRetrievalSettings: TuneRunAnswer }>(
        `mutation($mode: RetrievalMode!, $perKind: Int!, $seed: Int!, $apply: Boolean!, $kinds: [PseudoQuestionKind!], $questions: [LabelledQuestionInput!]) {
          tuneRetrievalSettings(mode: $mode, questionsPerKind: $perKind, seed: $seed, apply: $apply, kinds: $kinds, questions: $questions) { ${RUN_FIELDS} }
        }`,
        {
          mode: o.mode ?? 'HYBRID_HIERARCHICAL',
          perKind: o.perKind ?? QUESTIONS_PER_KIND.default,
          seed: o.seed ?? 0,
          apply: o.apply === true,
          kinds: o.kinds?.map(enumSpelling) ?? null,
          questions: questions?.map((q) => ({ ...q, passageIds: q.passageIds?.map(String) })) ?? null,
        },
      );
      let run = started;
      let bar: ProgressBar | undefined;
      while (run.status === 'running') {
        await new Promise((resolve) => setTimeout(resolve, TUNE_POLL_MS));
        ({ tuneRun: run } = await t.request<{ tuneRun: TuneRunAnswer }>(`query($id: ID!) { tuneRun(id: $id) { ${RUN_FIELDS} } }`, { id: started.id }));
        // (counts only: the run records no point's label)
        if (run.pointsTotal > 0) (bar ??= new ProgressBar(run.pointsTotal, 'tune')).update(run.pointsDone, '', run.pointsTotal);
      }
      bar?.finish();
      if (run.status === 'failed' || !run.report) {
        console.error(`tune: ${run.error ?? 'the run ended without a report'}`);
        return 1;
      }
      const report = asWritten(run.report);
      printTuneReport(report);
      return printStored(report, o.apply, run.settingsVersion);
    },
    { encoders: true },
  );
}
