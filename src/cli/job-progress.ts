import { ProgressBar } from './progress';

/**
 * What `dhr reembed` (cli/reembed.ts) shows of a re-embedding job while it follows it, in-process
 * or through a server's `job` query. Loads no store, so the remote form stays a GraphQL client.
 */
export interface FollowedJob {
  id: number;
  status: string;
  documentsDone: number;
  documentsTotal: number;
  passagesDone: number;
  passagesTotal: number;
  error: string | null;
}

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/** Reads the job every `everyMs` and draws one bar per level (documents, then passages) until it ends. */
export async function followJob<T extends FollowedJob>(read: () => Promise<T>, everyMs: number): Promise<T> {
  const bars = { documents: new ProgressBar(0, 'documents'), passages: new ProgressBar(0, 'passages') };
  let started = false;
  for (;;) {
    const job = await read();
    const level = job.documentsDone < job.documentsTotal || job.passagesDone === 0 ? 'documents' : 'passages';
    if (level === 'passages' && !started) {
      bars.documents.update(job.documentsDone, '', job.documentsTotal);
      bars.documents.finish();
      started = true;
    }
    const done = level === 'documents' ? job.documentsDone : job.passagesDone;
    const total = level === 'documents' ? job.documentsTotal : job.passagesTotal;
    bars[level].update(done, job.status, total);
    if (FINAL.has(job.status)) {
      bars[level].finish();
      return job;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The job's last line on stdout, and the exit code: 0 only when it succeeded. */
export function jobOutcome(job: FollowedJob): number {
  console.log(`job ${job.id} ${job.status}: ${job.documentsDone} documents, ${job.passagesDone} passages${job.error ? `; ${job.error}` : ''}`);
  return job.status === 'succeeded' ? 0 : 1;
}
