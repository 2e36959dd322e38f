import type { Config } from '../config';
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { DomainError, messageOf } from '../errors';
import { IngestError } from '../ingest/errors';
import { readInputFiles } from '../ingest/files';
import { SOURCE_FIELDS } from '../ingest/formats';
import { prepareDocument } from '../ingest/prepare';
import type { DocumentInput, SectionInput } from '../ingest/types';
import { ProgressBar } from './progress';
import { remoteGraphQL } from './remote';
import { GaveUp, withRetry, type RetryPolicy } from './retry';
import type { RemoteTarget } from './transport';

/**
 * What has no GraphQL twin among the commands that reach a server: `dhr ingest --url`. Locally
 * the pipeline streams the files through this process (any size, written and embedded here);
 * through a server they become durable ingest jobs of request-sized parts that this command sends
 * and follows (with `--job`, follows alone), which no in-process operation does. Every other
 * command that reaches a server is operations and a printer over cli/transport.ts
 * (cli/operations.ts, cli/ask.ts, cli/pairs.ts, cli/reembed.ts; cli/tune-report.ts, whose run the
 * server keeps).
 */

/** A refused or failed remote call is exit code 1 with the server's message. */
async function remote(command: string, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    console.error(`${command}: ${error.message} (${error.code})`);
    return 1;
  }
}

/** Requests stay well inside the server's MAX_INGEST_BATCH (1000) and MAX_BODY_BYTES (4 MiB) defaults. */
const BATCH_DOCUMENTS = 100;
const BATCH_CHARS = 2 << 20;
/** How often a waiting `dhr ingest --url` asks for its jobs' progress. */
const POLL_MS = 500;

const JOB_FIELDS = 'id status documents { done total } passages { done total exact } created updated unchanged failed documentsPerSecond etaSeconds error';
interface RemoteIngestJob {
  id: string;
  status: string;
  documents: { done: number; total: number };
  passages: { done: number; total: number | null; exact: boolean };
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  documentsPerSecond: number | null;
  etaSeconds: number | null;
  error: string | null;
}
const FINISHED = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED']);

/**
 * `dhr ingest --url`: files are read and checked here (a bad file or document fails alone, as
 * locally; a path given that cannot be read, or no documents at all, is refused before anything is
 * sent), then sent as durable ingest jobs (startIngest, one per request-sized part) that the
 * server's workers write and embed; this command shows their progress and waits for them. Ctrl-C
 * stops waiting only: the jobs go on, and it prints how to follow them. A server that does not
 * answer (restarting: connection refused, 503) is asked again with backoff for `retryForS`
 * seconds; the jobs are durable, so they go on once it is back, and giving up names them and
 * the command that follows them. Exit code 2 when any document failed, 1 when a job failed or
 * the server stayed away, 130 when interrupted.
 */
export function remoteIngest(
  config: Config,
  target: RemoteTarget,
  paths: string[],
  options: { source?: string; jobs?: number[]; retryForS?: number },
): Promise<number> {
  return remote('ingest', async () => {
    const interrupt = interruption();
    const retry = retryPolicy(target, options.retryForS ?? DEFAULT_RETRY_S, interrupt);
    try {
      if (options.jobs?.length)
        return await follow({ target, ids: options.jobs.map(String), origins: new Map(), failedHere: 0, failures: [], interrupt, retry });
      for (const given of paths) {
        try {
          await access(given, constants.R_OK);
        } catch (error) {
          console.error(`ingest: cannot read ${given}: ${messageOf(error)}; nothing was sent`);
          return 1;
        }
      }
      const failures: string[] = [];
      const parts: { origin: string; input: DocumentInput }[][] = [[]];
      let chars = 0;
      let documents = 0;
      for await (const { origin, input, error } of readInputFiles(paths, config.ingest)) {
        if (!input && !error) continue;
        documents++;
        let failure = error;
        if (input) {
          if (options.source && !input.source) input.source = options.source;
          // Checked here so one bad document fails alone instead of failing its whole request.
          try {
            prepareDocument(input, config.ingest, origin);
          } catch (e) {
            if (!(e instanceof IngestError)) throw e;
            failure = e;
          }
        }
        if (failure || !input) {
          failures.push(`${origin}: ${failure?.message}`);
          continue;
        }
        const document = wireDocument(input);
        const size = JSON.stringify(document).length;
        const part = parts.at(-1)!;
        if (part.length >= BATCH_DOCUMENTS || (part.length > 0 && chars + size > BATCH_CHARS)) {
          parts.push([]);
          chars = 0;
        }
        parts.at(-1)!.push({ origin, input: document });
        chars += size;
      }
      const sendable = parts.filter((p) => p.length > 0);
      if (sendable.length === 0) {
        for (const f of failures) console.error(`failed: ${f}`);
        console.error(
          documents === 0 ? `ingest: no documents found in ${paths.join(', ')}; nothing was sent` : 'ingest: every document failed; nothing was sent',
        );
        return documents === 0 ? 1 : 2;
      }
      // Origins by job and position, for the failures the server reports.
      const origins = new Map<string, string[]>();
      const ids: string[] = [];
      for (const [n, part] of sendable.entries()) {
        if (interrupt.stopped) break;
        let job: { id: string };
        try {
          // Sent again after a connection that failed mid-request too: if the server had queued the
          // part, the second job finds its documents unchanged (content hash) and writes nothing.
          ({ startIngest: job } = await withRetry(
            () =>
              remoteGraphQL<{ startIngest: { id: string } }>(
                target.url,
                'mutation($docs: [DocumentInput!]!) { startIngest(documents: $docs) { id } }',
                { docs: part.map((b) => b.input) },
                target,
              ),
            retry,
          ));
        } catch (error) {
          if (!(error instanceof GaveUp)) throw error;
          const unsent = sendable.slice(n).reduce((k, p) => k + p.length, 0);
          console.error(
            `ingest: ${gaveUp(error, target)}; ${unsent} documents were not sent. Run the same command again once it answers ` +
              `(documents already in are found unchanged)${ids.length ? `.\n${followHint(target, ids, QUEUED_AWAY)}` : ''}`,
          );
          return interrupt.stopped ? 130 : 1;
        }
        ids.push(job.id);
        origins.set(
          job.id,
          part.map((b) => b.origin),
        );
        console.error(`ingest job ${job.id}: ${part.length} documents queued on ${target.url}`);
      }
      return await follow({ target, ids, origins, failedHere: failures.length, failures, interrupt, retry });
    } finally {
      interrupt.dispose();
    }
  });
}

/** How long `dhr ingest --url` keeps asking a server that does not answer (--retry-for). */
export const DEFAULT_RETRY_S = 60;

/** Retries that say on stderr when the server went and when it is back, and stop on Ctrl-C. */
function retryPolicy(target: RemoteTarget, seconds: number, interrupt: ReturnType<typeof interruption>): RetryPolicy {
  return {
    forMs: seconds * 1000,
    wait: (ms) => interrupt.wait(ms),
    stopped: () => interrupt.stopped,
    onDown: (error) => console.error(`ingest: ${error.message}; trying again for up to ${seconds} s (--retry-for)`),
    onBack: (ms) => console.error(`ingest: the server at ${target.url} answers again (after ${(ms / 1000).toFixed(1)} s)`),
  };
}

const gaveUp = (error: GaveUp, target: RemoteTarget) => `gave up on the server at ${target.url} after ${Math.round(error.afterMs / 1000)} s: ${error.message}`;

const GOING_ON = { many: 'go on in the server', one: 'goes on in the server' };
const STORED_AWAY = { many: 'are stored on the server and go on when it is back', one: 'is stored on the server and goes on when it is back' };
const QUEUED_AWAY = { many: 'are queued on the server and go on when it is back', one: 'is queued on the server and goes on when it is back' };

/** The jobs by id, and the command and query that follow them. */
function followHint(target: RemoteTarget, ids: string[], state: { many: string; one: string }): string {
  const many = ids.length > 1;
  return (
    `ingest job${many ? 's' : ''} ${ids.join(', ')} ${many ? state.many : state.one}. Follow ${many ? 'them' : 'it'} with:\n` +
    `  dhr ingest --url ${target.url} ${ids.map((id) => `--job ${id}`).join(' ')}\n` +
    `or the query { ingestJob(id: "${ids[0]}") { status documents { done total } passages { done total } failed etaSeconds } }`
  );
}

/** SIGINT while this command runs: noted, not fatal, so it can say what goes on without it. */
function interruption(): { stopped: boolean; wait(ms: number): Promise<void>; dispose(): void } {
  let wake: (() => void) | undefined;
  const state = {
    stopped: false,
    wait: (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    dispose: () => process.off('SIGINT', onSignal),
  };
  const onSignal = () => {
    state.stopped = true;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  return state;
}

/** The jobs `dhr ingest --url` waits for, and what it knows of them. */
interface Following {
  target: RemoteTarget;
  ids: string[];
  origins: Map<string, string[]>;
  failedHere: number;
  failures: string[];
  interrupt: ReturnType<typeof interruption>;
  retry: RetryPolicy;
}

/** Polls the jobs with one progress bar over all their documents until they end, or until Ctrl-C. */
async function follow(f: Following): Promise<number> {
  const { target, ids, interrupt } = f;
  try {
    return await followJobs(f);
  } catch (error) {
    if (!(error instanceof GaveUp)) throw error;
    // Interrupted while the server was away, or it stayed away: the jobs are stored on it either way.
    if (interrupt.stopped) {
      console.error(`stopped waiting; ${followHint(target, ids, GOING_ON)}`);
      return 130;
    }
    console.error(`ingest: ${gaveUp(error, target)}.\n${followHint(target, ids, STORED_AWAY)}`);
    return 1;
  }
}

async function followJobs({ target, ids, origins, failedHere, failures, interrupt, retry }: Following): Promise<number> {
  const query = `query { ${ids.map((id, i) => `j${i}: ingestJob(id: "${id}") { ${JOB_FIELDS} }`).join(' ')} }`;
  const bar = new ProgressBar(0, 'ingest');
  let jobs: RemoteIngestJob[] = [];
  for (;;) {
    const data = await withRetry(() => remoteGraphQL<Record<string, RemoteIngestJob | null>>(target.url, query, {}, target), retry);
    const missing = ids.filter((_, i) => !data[`j${i}`]);
    if (missing.length > 0) {
      console.error(`ingest: the server at ${target.url} has no ingest job ${missing.join(', ')}`);
      return 1;
    }
    jobs = ids.map((_, i) => data[`j${i}`]!);
    const sum = (f: (j: RemoteIngestJob) => number) => jobs.reduce((n, j) => n + f(j), 0);
    const passages = sum((j) => j.passages.done);
    const eta = Math.max(...jobs.map((j) => j.etaSeconds ?? 0));
    const rate = sum((j) => (FINISHED.has(j.status) ? 0 : (j.documentsPerSecond ?? 0)));
    const extra = `${passages} passages${rate > 0 ? `, ${rate.toFixed(1)} documents/s` : ''}${eta > 0 ? `, ETA ${Math.ceil(eta)}s` : ''}`;
    bar.update(
      sum((j) => j.documents.done),
      extra,
      sum((j) => j.documents.total),
    );
    if (jobs.every((j) => FINISHED.has(j.status))) break;
    if (interrupt.stopped) {
      bar.finish();
      console.error(`stopped waiting; ${followHint(target, ids, GOING_ON)}`);
      return 130;
    }
    await interrupt.wait(POLL_MS);
  }
  bar.finish();
  for (const job of jobs.filter((j) => j.failed > 0)) {
    const { ingestJob } = await withRetry(
      () =>
        remoteGraphQL<{ ingestJob: { outcomes: { index: number; key: string | null; message: string | null }[] } }>(
          target.url,
          'query($id: ID!) { ingestJob(id: $id) { outcomes(status: FAILED) { index key message } } }',
          { id: job.id },
          target,
        ),
      retry,
    );
    for (const o of ingestJob.outcomes) failures.push(`${origins.get(job.id)?.[o.index] ?? `job ${job.id} #${o.index} (${o.key ?? 'no key'})`}: ${o.message}`);
  }
  for (const f of failures) console.error(`failed: ${f}`);
  const sum = (f: (j: RemoteIngestJob) => number) => jobs.reduce((n, j) => n + f(j), 0);
  const failed = sum((j) => j.failed) + failedHere;
  console.log(
    `ingested ${sum((j) => j.documents.total) + failedHere} documents on ${target.url}: ${sum((j) => j.created)} created, ${sum((j) => j.updated)} updated, ` +
      `${sum((j) => j.unchanged)} unchanged, ${failed} failed; ${sum((j) => j.passages.done)} passages written (job${ids.length > 1 ? 's' : ''} ${ids.join(', ')})`,
  );
  const broken = jobs.filter((j) => j.status !== 'SUCCEEDED');
  for (const j of broken) console.error(`ingest job ${j.id} ${j.status.toLowerCase()}${j.error ? `: ${j.error}` : ''}`);
  return broken.length > 0 ? 1 : failed > 0 ? 2 : 0;
}

/** Only the fields DocumentInput has: GraphQL refuses unknown ones (files may carry more). */
function wireDocument(d: DocumentInput): DocumentInput {
  const pick = <K extends keyof DocumentInput>(k: K) => (d[k] === undefined ? {} : { [k]: d[k] });
  return {
    ...pick('key'),
    ...pick('title'),
    ...pick('abstract'),
    ...Object.assign({}, ...SOURCE_FIELDS.map(pick)),
    ...pick('source'),
    ...pick('metadata'),
    ...(d.sections ? { sections: d.sections.map(wireSection) } : {}),
  };
}

/** Recursion is safe: prepareDocument has bounded the depth (MAX_SECTION_DEPTH). */
function wireSection(s: SectionInput): SectionInput {
  return { title: s.title, ...(s.text === undefined ? {} : { text: s.text }), ...(s.sections ? { sections: s.sections.map(wireSection) } : {}) };
}
