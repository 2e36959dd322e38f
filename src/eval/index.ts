/** `dhr eval`: build a data set, load it into a fresh database, run the protocol, write the report. */
import { buildReport, writeReport } from './report';
import { evaluate } from './evaluate';
import { buildFactbook } from './factbook';
import { buildPydocs } from './pydocs';
import { loadCorpus, type RunSetup } from './run';
import type { EvalDataset } from './types';

export const DATASETS: Record<string, (cacheDir: string) => EvalDataset> = {
  pydocs: (cacheDir) => buildPydocs(cacheDir),
  factbook: (cacheDir) => buildFactbook(cacheDir),
};

export interface EvalCommandOptions extends RunSetup {
  dataset: string;
  cacheDir: string;
  outDir: string;
  k1: number;
  k2: number;
  k1Sweep: number[];
}

export async function runEvaluation(options: EvalCommandOptions): Promise<string[]> {
  const started = process.hrtime.bigint();
  const build = DATASETS[options.dataset];
  if (!build) throw new Error(`unknown data set "${options.dataset}"; known: ${Object.keys(DATASETS).join(', ')}`);
  const dataset = build(options.cacheDir);
  options.log(`${dataset.name}: ${dataset.documents.length} documents, ${dataset.questions.length} questions`);
  const corpus = await loadCorpus(dataset, options);
  try {
    const settings = { k1: options.k1, k2: options.k2, k1Sweep: options.k1Sweep };
    const outcome = await evaluate(dataset, corpus, { ...settings, log: options.log });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return await writeReport(buildReport(dataset, corpus, outcome, settings, seconds), options.outDir);
  } finally {
    await corpus.close();
  }
}
