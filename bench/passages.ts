/** Seeded ~100-word English-like passages (shared by the embedding bench and the parity corpus). */
const WORDS = (
  'the of and to in is that for it as was with be by on not he this are or his from at which but have an they ' +
  'you were her she there been one all we their has would when if so no more what out up about into them can ' +
  'time only new some could these two may first then do any like my now over such our man me even most made after ' +
  'also did many before must through back years where much your way well down should because each just those people ' +
  'how too little state good very make world still own see men work long get here between both life being under never ' +
  'day same another know while last might us great old year off come since against go came right used take three ' +
  'encoder sentence embedding vector search database latency throughput transformer attention tokenizer vocabulary ' +
  'cosine similarity benchmark server request response cache memory disk network query index document passage'
).split(' ');

/** LCG: deterministic across runs and platforms. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32;
}

export function passage(seed: number, nWords = 100): string {
  const r = rng(seed);
  const out: string[] = [];
  let cap = true;
  for (let i = 0; i < nWords; i++) {
    let w = WORDS[Math.floor(r() * WORDS.length)];
    if (cap) {
      w = w[0].toUpperCase() + w.slice(1);
      cap = false;
    }
    const p = r();
    if (p < 0.08) {
      w += '.';
      cap = true;
    } else if (p < 0.14) w += ',';
    out.push(w);
  }
  return out.join(' ') + '.';
}

/** n passages with seeds first, first+1, ... */
export const passages = (n: number, first = 1000): string[] => Array.from({ length: n }, (_, i) => passage(first + i));
