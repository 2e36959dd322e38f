/**
 * A server's typed spans of stored sentences are tagged in a thread (src/pipeline/span-thread.ts),
 * off the readers' thread: the same spans as tagging on this thread, for a request's ingest and for
 * background work alike. Timings live in `npm run bench:writer-fairness`.
 */
import { inBackground } from '../src/encoders/priority';
import { closeSpanThreads, tagSpansInThread } from '../src/pipeline/span-thread';
import { sentencesToStore, spansToStore } from '../src/retrieval/sentence-vectors';

const PASSAGES = [
  'The harbour was built in 1887 by Thomas Telford. It cost 4 million pounds.',
  'Run `npm install` before the first start. The server listens on port 4000.',
  'Paris is the capital of France.',
  '',
].map((text) => sentencesToStore(text).texts);

afterAll(() => closeSpanThreads());

describe('tagging stored sentences in a thread', () => {
  it('gives the spans tagging on this thread gives, in order, for foreground and background work', async () => {
    const expected = await spansToStore(PASSAGES);
    expect(expected.some((s) => s.s.some((spans) => spans.length > 0))).toBe(true);
    const [foreground, background] = await Promise.all([tagSpansInThread(PASSAGES), inBackground(() => tagSpansInThread(PASSAGES))]);
    expect(foreground).toEqual(expected);
    expect(background).toEqual(expected);
  }, 60_000);
});
