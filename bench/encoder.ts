/**
 * npm run bench:encoder — onnxruntime thread and spinning settings for the two encoder paths.
 *
 * For each setting, one USE-lite encoder (the default model) in this process:
 * - query path: BENCH_SPACED (100) single-question encodes spaced BENCH_GAP_MS (30) apart, as a
 *   lightly loaded API sees them: time inside encode, process CPU (process.cpuUsage: every thread)
 *   and wall time. CPU well above encode time is threads spinning while idle.
 * - embedding path: BENCH_PASSAGES (512) passages of ~60 words in the encoder's batches of 16:
 *   passages per second and CPU per passage.
 * The first row is the old setting (all cores, onnxruntime's default spinning); ratios are against
 * it, in the same run. Settings run one after the other, each session released before the next.
 */
import { availableParallelism, loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { UseLiteEncoder } from '../src/encoders/use-lite/encoder';
import { prng } from '../test/helpers/prng';

const SPACED = Number(process.env.BENCH_SPACED ?? 100);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 30);
const PASSAGES = Number(process.env.BENCH_PASSAGES ?? 512);

const WORDS = (
  'the of and to in is was for on as with by at from that which are this be or an it were has have had not city river ' +
  'population capital country government language history music science water energy school railway bridge mountain ' +
  'island king war church university company league season album species island north south east west century first'
).split(' ');

function text(rand: () => number, n: number): string {
  return Array.from({ length: n }, () => WORDS[Math.floor(rand() * WORDS.length)]).join(' ');
}

interface Setting {
  label: string;
  threads: number;
  spin: boolean;
}

const cores = availableParallelism();
const SETTINGS: Setting[] = [
  { label: `old: all cores (${cores}), spinning`, threads: 0, spin: true },
  { label: `all cores (${cores}), no spinning`, threads: 0, spin: false },
  { label: '1 thread, spinning', threads: 1, spin: true },
  { label: '1 thread, no spinning', threads: 1, spin: false },
];

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

async function measure(s: Setting, questions: string[], passages: string[]) {
  const encoder = await UseLiteEncoder.load({ threads: s.threads, queryThreads: s.threads, allowSpinning: s.spin });
  try {
    for (let i = 0; i < 5; i++) await encoder.encode([questions[i]], 'questionPassage');
    await encoder.encode(passages.slice(0, 32), 'passage');
    await sleep(200);

    let encodeMs = 0;
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    for (let i = 0; i < SPACED; i++) {
      const t = performance.now();
      await encoder.encode([questions[i % questions.length]], 'questionPassage');
      encodeMs += performance.now() - t;
      await sleep(GAP_MS);
    }
    const spaced = { encodeMs, cpuMs: cpuMs(process.cpuUsage(cpu0)), wallMs: performance.now() - wall0 };

    const cpu1 = process.cpuUsage();
    const wall1 = performance.now();
    await encoder.encode(passages, 'passage');
    const wallMs = performance.now() - wall1;
    const batch = { perSecond: (passages.length / wallMs) * 1000, cpuPerPassageMs: cpuMs(process.cpuUsage(cpu1)) / passages.length };
    return { spaced, batch };
  } finally {
    await encoder.close();
  }
}

async function main(): Promise<void> {
  const rand = prng(5);
  const questions = Array.from({ length: SPACED }, () => `what is the ${text(rand, 6)}?`);
  const passages = Array.from({ length: PASSAGES }, () => text(rand, 60));
  console.log(
    `bench:encoder — use-lite, ${cores} cores, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at start`,
  );
  console.log(`query path: ${SPACED} single questions ${GAP_MS} ms apart; embedding path: ${PASSAGES} passages of 60 words, batches of 16\n`);
  const rows: { s: Setting; r: Awaited<ReturnType<typeof measure>> }[] = [];
  for (const s of SETTINGS) rows.push({ s, r: await measure(s, questions, passages) });
  const base = rows[0].r;
  console.log(
    'setting'.padEnd(34) +
      'encode ms/q'.padStart(12) +
      'CPU s'.padStart(8) +
      'wall s'.padStart(8) +
      'CPU/wall'.padStart(9) +
      'CPU vs old'.padStart(11) +
      '  │' +
      'passages/s'.padStart(11) +
      'vs old'.padStart(8) +
      'CPU ms/passage'.padStart(16),
  );
  for (const { s, r } of rows) {
    console.log(
      s.label.padEnd(34) +
        (r.spaced.encodeMs / SPACED).toFixed(2).padStart(12) +
        (r.spaced.cpuMs / 1000).toFixed(2).padStart(8) +
        (r.spaced.wallMs / 1000).toFixed(2).padStart(8) +
        (r.spaced.cpuMs / r.spaced.wallMs).toFixed(2).padStart(9) +
        (r.spaced.cpuMs / base.spaced.cpuMs).toFixed(2).padStart(11) +
        '  │' +
        r.batch.perSecond.toFixed(0).padStart(11) +
        (r.batch.perSecond / base.batch.perSecond).toFixed(2).padStart(8) +
        r.batch.cpuPerPassageMs.toFixed(2).padStart(16),
    );
  }
  console.log(
    `\nload average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} at end`,
  );
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
