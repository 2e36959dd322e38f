import { open, rename, rm } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Config } from '../config';
import { badUserInput, DomainError, ErrorCode, messageOf, notFound } from '../errors';
import { toGlobalId } from '../graphql/ids';
import type { Database } from '../store/db';
import { readFeedbackFile } from '../training/feedback';
import { DEFAULT_MAX_QUESTION_WORDS, minePairs, type MineOptions } from '../training/mine';
import { DEFAULT_NEGATIVES, MAX_TRAINING_PAIRS, type NegativeCounts, PAIR_KINDS, type PairKind, pairKindName, type TrainingPair } from '../training/pair';
import { ProgressBar } from './progress';
import { type ServerOptions, serverFor, type Transport, withTransport } from './transport';

/** Opens the store for one command; a DomainError (bad input, too few pairs) is exit code 1 with its message. */
async function withStore(config: Config, name: string, fn: (db: Database) => Promise<number>): Promise<number> {
  // Loaded here, not at the top: with --url these commands are GraphQL clients and need no store.
  const { openMigratedDatabase } = require('../store/open') as typeof import('../store/open');
  const db = await openMigratedDatabase(config);
  try {
    return await fn(db);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    console.error(`${name}: ${error.message}`);
    return 1;
  } finally {
    await db.close();
  }
}

/** Writes with backpressure, so a slow consumer (a pipe) never makes lines pile up in memory. */
async function writeLine(out: Writable, line: string): Promise<void> {
  if (!out.write(`${line}\n`)) await once(out, 'drain');
}

interface Output {
  write(line: string): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Where the lines go: stdout for "-" (or no --out), else a temporary file beside the target that
 * takes its name only once every pair is written, so a failed run leaves no half file. The file is
 * opened first, so a path that cannot be written is an error before any mining.
 */
async function openOutput(path: string | undefined): Promise<Output> {
  if (path === undefined || path === '-') {
    return { write: (line) => writeLine(process.stdout, line), commit: async () => undefined, abort: async () => undefined };
  }
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  let handle;
  try {
    handle = await open(temporary, 'w');
  } catch (error) {
    throw badUserInput(`cannot write ${path}: ${messageOf(error)}`, 'out');
  }
  const out = handle.createWriteStream({ encoding: 'utf8' });
  let failure: unknown;
  // A write error (disk full) surfaces at the next line or at commit, never as an unhandled event.
  out.on('error', (error) => (failure ??= error));
  return {
    write: async (line) => {
      if (failure) throw failure;
      await writeLine(out, line);
    },
    commit: async () => {
      await new Promise<void>((resolve) => out.end(resolve));
      if (failure) throw failure;
      await rename(temporary, path);
    },
    abort: async () => {
      out.destroy();
      await rm(temporary, { force: true });
    },
  };
}

export interface PairsCommandOptions extends Omit<MineOptions, 'onPlan'> {
  out?: string;
}

/**
 * `dhr pairs`: mined on the store (every pair, streamed to the file) or, with --url, the server's
 * trainingPairs (at most MAX_TRAINING_PAIRS of a kind: the API has no cursor over a mining run),
 * as the transport chooses (cli/transport.ts serverFor).
 */
export function pairsCommand(config: Config, options: PairsCommandOptions & ServerOptions): Promise<number> {
  const { url, key, ...mine } = options;
  return serverFor(config, { url, key }, 'pairs') ? remotePairsCommand(config, options) : minePairsCommand(config, mine);
}

/** `dhr pairs` on the store: training pairs as JSONL, with a progress bar and the count of each kind at the end. */
function minePairsCommand(config: Config, options: PairsCommandOptions): Promise<number> {
  return withStore(config, 'pairs', async (db) => {
    const counts = Object.fromEntries(PAIR_KINDS.map((k) => [k, 0])) as Record<PairKind, number>;
    let bar: ProgressBar | undefined;
    let written = 0;
    const pairs = minePairs(db, {
      ...options,
      bm25: options.bm25 ?? config.bm25,
      onPlan: (planned) =>
        (bar = new ProgressBar(
          Object.values(planned).reduce((a, b) => a + b, 0),
          'pairs',
        )),
    });
    // The plan (and a too-few error) comes with the first pair, before any file is made.
    const first = await pairs.next();
    const output = await openOutput(options.out);
    try {
      for (let next = first; !next.done; next = await pairs.next()) {
        await output.write(JSON.stringify(next.value));
        counts[next.value.kind] += 1;
        written += 1;
        bar?.update(written, next.value.kind);
      }
      await output.commit();
    } catch (error) {
      await output.abort();
      throw error;
    }
    bar?.finish();
    printWritten(options, written, counts);
    return 0;
  });
}

/** The last line: how many pairs were written, and where, and how many of each kind. */
function printWritten(options: { out?: string; kinds?: readonly PairKind[] }, written: number, counts: Record<PairKind, number>): void {
  const kinds = options.kinds ?? PAIR_KINDS;
  console.error(
    `pairs: ${written} written${options.out && options.out !== '-' ? ` to ${options.out}` : ''} (${kinds.map((k) => `${k} ${counts[k]}`).join(', ')})`,
  );
}

const PASSAGE_FIELDS = 'passageId documentId sectionId titlePath text';
const PAIR_FIELDS = `kind question questionPassageId positive { ${PASSAGE_FIELDS} } positiveDocument { documentId title }
  negatives { bm25 { ${PASSAGE_FIELDS} } inDoc { ${PASSAGE_FIELDS} } inSec { ${PASSAGE_FIELDS} } documents { documentId title } judged { ${PASSAGE_FIELDS} } }`;

type Sent<T> = { [K in keyof T]: T[K] extends number ? string : T[K] extends number | null ? string | null : T[K] };
type SentPassage = Sent<TrainingPair['positive']>;
interface SentPair {
  kind: string;
  question: string;
  questionPassageId: string | null;
  positive: SentPassage;
  positiveDocument: Sent<TrainingPair['positiveDocument']>;
  negatives: { bm25: SentPassage[]; inDoc: SentPassage[]; inSec: SentPassage[]; documents: Sent<TrainingPair['positiveDocument']>[]; judged: SentPassage[] };
}

/** A pair as the API sends it (ID strings, the kind's enum name) as `dhr pairs` writes it: the miner's fields, order and spelling. */
function minedPair(p: SentPair): TrainingPair {
  const passage = (x: SentPassage) => ({
    passageId: Number(x.passageId),
    documentId: Number(x.documentId),
    sectionId: x.sectionId === null ? null : Number(x.sectionId),
    titlePath: x.titlePath,
    text: x.text,
  });
  const document = (d: SentPair['positiveDocument']) => ({ documentId: Number(d.documentId), title: d.title });
  return {
    kind: PAIR_KINDS.find((k) => pairKindName(k) === p.kind)!,
    question: p.question,
    questionPassageId: p.questionPassageId === null ? null : Number(p.questionPassageId),
    positive: passage(p.positive),
    positiveDocument: document(p.positiveDocument),
    negatives: {
      bm25: p.negatives.bm25.map(passage),
      inDoc: p.negatives.inDoc.map(passage),
      inSec: p.negatives.inSec.map(passage),
      documents: p.negatives.documents.map(document),
      judged: p.negatives.judged.map(passage),
    },
  };
}

/**
 * `dhr pairs --url`: the server's trainingPairs, one request per kind (a request returns at most
 * MAX_TRAINING_PAIRS, the first of its kinds in turn, so a kind at a time keeps --limit a bound of
 * each kind, as locally), written as the local command writes them. The server mines with its
 * defaults, so --negatives and --max-question-words other than theirs are refused before anything
 * is sent, and without --limit each kind is its first MAX_TRAINING_PAIRS, which is said.
 */
function remotePairsCommand(config: Config, options: PairsCommandOptions & ServerOptions): Promise<number> {
  const negatives = { ...DEFAULT_NEGATIVES, ...options.negatives };
  const other = [
    ...((Object.keys(DEFAULT_NEGATIVES) as (keyof NegativeCounts)[]).some((k) => negatives[k] !== DEFAULT_NEGATIVES[k])
      ? [`--negatives (the server's: ${DEFAULT_NEGATIVES.bm25})`]
      : []),
    ...((options.maxQuestionWords ?? DEFAULT_MAX_QUESTION_WORDS) !== DEFAULT_MAX_QUESTION_WORDS
      ? [`--max-question-words (the server's: ${DEFAULT_MAX_QUESTION_WORDS})`]
      : []),
    ...((options.limit ?? 0) > MAX_TRAINING_PAIRS ? [`--limit over ${MAX_TRAINING_PAIRS} (the most the server's trainingPairs returns)`] : []),
  ];
  if (other.length > 0) {
    console.error(`pairs: with --url the server mines with its own settings: ${other.join(', ')} cannot be sent`);
    return Promise.resolve(1);
  }
  return withTransport(config, options, 'pairs', async (t) => {
    const kinds = PAIR_KINDS.filter((k) => (options.kinds ?? PAIR_KINDS).includes(k));
    const limit = options.limit ?? MAX_TRAINING_PAIRS;
    const pairs: TrainingPair[] = [];
    const counts = Object.fromEntries(PAIR_KINDS.map((k) => [k, 0])) as Record<PairKind, number>;
    const none = new Map<PairKind, string>();
    for (const kind of kinds) {
      const mined = await pairsOfKind(t, kind, limit, options.seed ?? 0);
      if (typeof mined === 'string') none.set(kind, mined);
      else pairs.push(...mined);
      counts[kind] = typeof mined === 'string' ? 0 : mined.length;
    }
    const minimum = options.minPairs ?? 1;
    if (pairs.length < minimum) {
      // In the local command's words (training/mine.ts planPairs), with the server's reason for each kind that had none.
      const asked = options.kinds ?? PAIR_KINDS;
      const empty = asked.flatMap((k) => none.get(k) ?? []);
      throw badUserInput(
        `too few training pairs: ${pairs.length} of kinds ${asked.join(', ')}, at least ${minimum} needed` + (empty.length ? `; ${empty.join('; ')}` : ''),
        'kinds',
      );
    }
    const output = await openOutput(options.out);
    try {
      for (const pair of pairs) await output.write(JSON.stringify(pair));
      await output.commit();
    } catch (error) {
      await output.abort();
      throw error;
    }
    printWritten(options, pairs.length, counts);
    const bounded = options.limit === undefined ? kinds.filter((k) => counts[k] === MAX_TRAINING_PAIRS) : [];
    if (bounded.length > 0) {
      console.error(
        `pairs: ${bounded.join(', ')}: the first ${MAX_TRAINING_PAIRS} (the most the server's trainingPairs returns); dhr pairs on the server's store writes every pair`,
      );
    }
    return 0;
  });
}

/** The first `limit` pairs of one kind from the server, or, when it has none, why (the server's words). */
async function pairsOfKind(t: Transport, kind: PairKind, limit: number, seed: number): Promise<TrainingPair[] | string> {
  try {
    const { trainingPairs } = await t.request<{ trainingPairs: SentPair[] }>(
      `query($kinds: [TrainingPairKind!], $first: Int!, $seed: Int!) { trainingPairs(kinds: $kinds, first: $first, seed: $seed) { ${PAIR_FIELDS} } }`,
      { kinds: [pairKindName(kind)], first: limit, seed },
    );
    return trainingPairs.map(minedPair);
  } catch (error) {
    // "too few training pairs: 0 of kinds K, at least 1 needed; K: why": a kind with none, which is no refusal of the whole run.
    if (!(error instanceof DomainError) || error.code !== ErrorCode.BAD_USER_INPUT || !error.message.startsWith('too few training pairs:')) throw error;
    return error.message.slice(error.message.indexOf('; ') + 2);
  }
}

/** How many passages one nodes request asks about (MAX_PAGE_SIZE's default). */
const NODES_PER_REQUEST = 100;
/** Judgements an importFeedback request carries to a server: about 1 MB at most, under its body limit (MAX_BODY_BYTES). */
const JUDGEMENTS_PER_REQUEST = 500;

/**
 * `dhr feedback import <file>`, on the store or with --url: every line read and checked, every
 * passage it names looked up (nodes), then the judgements stored by importFeedback, so a bad file
 * changes nothing and a refusal names its line. In-process that is one request, one transaction;
 * to a server, requests of JUDGEMENTS_PER_REQUEST (each its own transaction), and a server that
 * fails midway is said with how many were recorded.
 */
export function feedbackImportCommand(config: Config, path: string, options: ServerOptions): Promise<number> {
  return withTransport(config, options, 'feedback import', async (t) => {
    const items = await readFeedbackFile(path);
    for (let from = 0; from < items.length; from += NODES_PER_REQUEST) {
      const part = items.slice(from, from + NODES_PER_REQUEST);
      const { nodes } = await t.request<{ nodes: ({ id: string } | null)[] }>('query($ids: [ID!]!) { nodes(ids: $ids) { id } }', {
        ids: part.map((i) => toGlobalId('Passage', i.input.passageId)),
      });
      const missing = nodes.findIndex((n) => n === null);
      // In the words of store/feedback.ts insertFeedback.
      if (missing >= 0) throw notFound(`line ${part[missing].line}: no passage with id ${part[missing].input.passageId}`, 'passageId');
    }
    const size = t.url ? JUDGEMENTS_PER_REQUEST : Math.max(items.length, 1);
    let relevant = 0;
    for (let from = 0; from < items.length; from += size) {
      const part = items.slice(from, from + size);
      try {
        const { importFeedback } = await t.request<{ importFeedback: { relevant: number } }>(
          'mutation($judgements: [FeedbackJudgementInput!]!) { importFeedback(judgements: $judgements) { relevant } }',
          { judgements: part.map(({ input }) => ({ question: input.question, passageId: String(input.passageId), relevant: input.relevant })) },
        );
        relevant += importFeedback.relevant;
      } catch (error) {
        if (from > 0) console.error(`feedback import: ${from} of ${items.length} judgements recorded before line ${part[0].line} failed`);
        throw error;
      }
    }
    console.log(`imported ${items.length} judgements (${relevant} relevant, ${items.length - relevant} not relevant)`);
    return 0;
  });
}
