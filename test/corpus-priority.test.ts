/**
 * The corpus threads of a server's encoder (BulkThreadEncoder, src/encoders/priority.ts): what an
 * ingest request waits for is encoded at the process's priority, so readers that keep the cores
 * busy do not starve it; background work (inBackground: `dhr serve`'s embedding, job workers) at
 * nice 10. Checked in the kernel's view of this process's threads (Linux /proc).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BACKGROUND_NICE } from '../src/encoders/bulk-thread';
import { inBackground } from '../src/encoders/priority';
import { loadEncoder } from '../src/encoders/set';
import type { Encoder } from '../src/encoders/types';
import { writeTinyModel } from './helpers/tiny-model';

/** This process's threads at the background nice value (field 19 of /proc/<pid>/task/<tid>/stat). */
function lowPriorityThreads(): number {
  return readdirSync('/proc/self/task').filter((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === BACKGROUND_NICE;
    } catch {
      return false; // the thread ended meanwhile
    }
  }).length;
}

const linux = existsSync('/proc/self/task');

(linux ? describe : describe.skip)('corpus encoding priority', () => {
  let root: string;
  let encoder: Encoder;
  let onMain: Encoder;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'dhr-priority-'));
    const model = await writeTinyModel(root, 'tiny-priority');
    encoder = await loadEncoder(model, { bulkThread: true, threads: 1 });
    onMain = await loadEncoder(model, { threads: 1 });
  }, 60_000);
  afterAll(async () => {
    await encoder?.close();
    await onMain?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('encodes a request’s passages at the process’s priority and background passages at nice 10, with the same vectors', async () => {
    const texts = ['the harbour floods at spring tide', 'a lighthouse stands on the northern pier'];
    const expected = (await onMain.encode(texts, 'passage')).vectors;
    const before = lowPriorityThreads();

    const foreground = await encoder.encode(texts, 'passage');
    expect(foreground.vectors).toEqual(expected);
    // No thread of lower priority did it (one at nice 10 is what starved ingests beside readers).
    expect(lowPriorityThreads()).toBe(before);

    const background = await inBackground(() => encoder.encode(texts, 'document'));
    expect(background.vectors).toHaveLength(2);
    expect(lowPriorityThreads()).toBeGreaterThan(before);
    // Marked work stays marked through its awaits; work outside the mark is not.
    expect((await encoder.encode(texts, 'passage')).vectors).toEqual(expected);
  }, 60_000);
});
