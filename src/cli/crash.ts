import type { IngestEvent } from '../pipeline/ingest';

/**
 * A deterministic crash point for the crash-consistency tests (test/ingest-resume.test.ts):
 * `DHR_TEST_CRASH_AFTER=<stage>:<n>` makes `dhr ingest` SIGKILL itself — no cleanup, no exit
 * handlers, as a power cut or the OOM killer would — once `n` documents are written (`write:n`),
 * once the full-text index is written (`index:0`), once `n` passages are embedded (`embed:n`), or
 * inside the transaction of bulk batch `n` once its rows and postings are written (`batch:n`).
 * Read only here, at the CLI edge; unset, it does nothing.
 */
export function crashPoint(spec: string | undefined): (event: IngestEvent) => void {
  const match = spec ? /^(write|index|embed|batch):(\d+)$/.exec(spec) : null;
  if (!spec) return () => undefined;
  if (!match) throw new Error(`DHR_TEST_CRASH_AFTER must be write:N, index:0, embed:N or batch:N, got "${spec}"`);
  const stage = match[1];
  const n = Number(match[2]);
  return (event) => {
    if (event.stage !== stage) return;
    const reached =
      event.stage === 'write'
        ? event.done >= n
        : event.stage === 'index'
          ? true
          : event.stage === 'batch'
            ? !event.committed && event.batch >= n
            : event.level === 'passages' && event.done >= n;
    if (reached) process.kill(process.pid, 'SIGKILL');
  };
}
