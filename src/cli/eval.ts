import * as path from 'node:path';
import type { Config } from '../config';
import { runEvaluation } from '../eval';
import { parsePoint, type PointInput } from '../eval/points';
import { runProseEvaluation } from '../eval/prose-highlights';
import type { RunSetup } from '../eval/run';
import { packageRoot } from '../paths';
import { RETRIEVE_DEFAULTS } from '../retrieval/defaults';
import { QUESTIONS_PER_KIND } from '../tuning/pseudo-questions';

/** What `dhr eval` takes from its command line (program.ts declares the options). */
export interface EvalCommandOptions {
  points?: string[];
  tuneGap?: boolean;
  split?: 'dev' | 'test';
  dataset: string;
  out?: string;
  cache?: string;
  k1Sweep: string;
  updateDocs?: boolean;
  reuseCorpus?: boolean;
  reuseSweeps?: string;
  skipSweep?: string[];
  adapters?: boolean;
  selfTune?: boolean;
  questionEncoder?: string;
  questionRoles: string;
}

/** `dhr eval --dataset …`. */
export async function evalCommand(config: Config, options: EvalCommandOptions): Promise<number> {
  const root = packageRoot();
  const k1Sweep = options.k1Sweep.split(',').map((k) => Number(k.trim()));
  if (k1Sweep.some((k) => !Number.isInteger(k) || k < 1 || k > 1000)) {
    console.error('eval: --k1-sweep takes integers from 1 to 1000, comma-separated');
    return 1;
  }
  const roles = questionRoles(options.questionRoles);
  if (options.questionEncoder && !roles) {
    console.error(`eval: --question-roles takes ${QUESTION_ROLES.join(', ')} (comma-separated), got "${options.questionRoles}"`);
    return 1;
  }
  if (options.dataset === 'prose-highlights') {
    // Highlights only: no retrieval sweeps; dev and test splits, today's method beside the typed one.
    const written = await runProseEvaluation({
      ...corpusSetup(config),
      corpusCacheDir: options.reuseCorpus ? path.join(root, '.cache', 'eval-corpus') : undefined,
      cacheDir: path.resolve(options.cache ?? path.join(root, '.cache', 'datasets')),
      outDir: path.resolve(options.out ?? (options.updateDocs ? path.join(root, 'docs', 'eval') : path.join(root, '.cache', 'eval'))),
      command: `dhr eval --dataset prose-highlights${options.updateDocs ? ' --update-docs' : ''}${options.reuseCorpus ? ' --reuse-corpus' : ''}`,
    });
    console.log(`wrote ${written.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
    return 0;
  }
  let points: PointInput[] | undefined;
  try {
    points = options.points?.length ? options.points.map(parsePoint) : undefined;
  } catch (e) {
    console.error(`eval: ${(e as Error).message}`);
    return 1;
  }
  const written = await runEvaluation({
    dataset: options.dataset,
    points: points ? { split: options.split ?? 'test', points } : undefined,
    tuneGap: options.tuneGap ? { split: options.split ?? 'test', perKind: QUESTIONS_PER_KIND.default, seed: 0 } : undefined,
    cacheDir: path.resolve(options.cache ?? path.join(root, '.cache', 'datasets')),
    // The committed report changes only when asked for; other runs write under .cache/.
    outDir: path.resolve(options.out ?? (options.updateDocs ? path.join(root, 'docs', 'eval') : path.join(root, '.cache', 'eval'))),
    corpusCacheDir: options.reuseCorpus ? path.join(root, '.cache', 'eval-corpus') : undefined,
    k1: RETRIEVE_DEFAULTS.k1,
    k2: 100,
    k1Sweep,
    ...corpusSetup(config),
    reuseSweepsFrom: options.reuseSweeps ? path.resolve(options.reuseSweeps) : undefined,
    skipSweeps: options.skipSweep?.length ? options.skipSweep : undefined,
    adapters: Boolean(options.adapters),
    selfTune: options.selfTune ? { perKind: QUESTIONS_PER_KIND.default, seed: 0 } : undefined,
    questionEncoder: options.questionEncoder && roles ? { folder: path.resolve(options.questionEncoder), roles } : undefined,
    commandFlags: [
      options.updateDocs && '--update-docs',
      (points || options.tuneGap) && `--split ${options.split ?? 'test'}`,
      options.tuneGap && '--tune-gap',
      ...(options.points ?? []).map((p) => `--points '${p}'`),
      options.reuseCorpus && '--reuse-corpus',
      options.reuseSweeps && `--reuse-sweeps ${options.reuseSweeps}`,
      ...(options.skipSweep ?? []).map((t) => `--skip-sweep '${t}'`),
      options.adapters && '--adapters',
      options.selfTune && '--self-tune',
      options.questionEncoder && `--question-encoder ${path.basename(options.questionEncoder)} --question-roles ${options.questionRoles}`,
    ]
      .filter(Boolean)
      .join(' '),
  });
  console.log(`wrote ${written.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
  return 0;
}

/** How an evaluation corpus is encoded and loaded, from the configuration (also for scripts/). */
export function corpusSetup(config: Config): Omit<RunSetup, 'corpusCacheDir'> {
  return {
    encoders: config.encoders,
    modelCacheDir: config.modelCacheDir,
    encoderThreads: config.encoderThreads,
    ingest: config.ingest,
    embedBatchSize: config.embedBatchSize,
    log: (line) => console.error(line),
  };
}

const QUESTION_ROLES = ['questionPassage', 'questionDocument'] as const;

/** --question-roles: a comma-separated subset of the two question roles (undefined: something else). */
function questionRoles(list: string): Array<(typeof QUESTION_ROLES)[number]> | undefined {
  const roles = list.split(',').map((r) => r.trim());
  const known = (r: string): r is (typeof QUESTION_ROLES)[number] => (QUESTION_ROLES as readonly string[]).includes(r);
  return roles.every(known) ? [...new Set(roles)] : undefined;
}
