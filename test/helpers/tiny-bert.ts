/**
 * Test fixture: a tiny BERT-shaped ONNX model written with onnx-proto, plus the same math in plain JS
 * so tests can check the encoder end to end without downloading a real model.
 *
 * Graph (opset 17): word + position (+ token type) embeddings → LayerNorm → one single-head
 * self-attention block with the attention mask as an additive bias → LayerNorm → tanh feed-forward
 * with residual → `last_hidden_state` [B,S,H] (or a BERT-style `pooler_output` [B,H]).
 */
import { onnx } from 'onnx-proto';
import { prng } from './prng';

export interface TinyBertOptions {
  vocabSize: number;
  hidden: number;
  /** Rows of the position table: the longest sequence the model can take. */
  maxPositions: number;
  seed: number;
  inputType?: 'int64' | 'int32';
  /** Declare a token_type_ids input (BERT exports do; MiniLM-style ones may not). */
  tokenTypeIds?: boolean;
  /** A fixed sequence dim instead of a symbolic one. */
  fixedSeq?: number;
  /** Leave the hidden dim of the output symbolic, so the encoder must probe for it. */
  symbolicHidden?: boolean;
  output?: 'last_hidden_state' | 'pooler_output';
  /** Word embeddings from a Constant node rather than an initializer: hides the vocab size from graph inspection. */
  embeddingsAsConstant?: boolean;
}

export interface TinyBertWeights {
  hidden: number;
  ffn: number;
  word: Float32Array;
  pos: Float32Array;
  type: Float32Array | null;
  ln1g: Float32Array;
  ln1b: Float32Array;
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
  wo: Float32Array;
  ln2g: Float32Array;
  ln2b: Float32Array;
  w1: Float32Array;
  w2: Float32Array;
  wp: Float32Array;
}

const EPS = 1e-12;

export function makeWeights(o: TinyBertOptions): TinyBertWeights {
  const rand = prng(o.seed);
  const H = o.hidden;
  const F = 2 * H;
  const mat = (n: number, scale: number) => Float32Array.from({ length: n }, () => (rand() * 2 - 1) * scale);
  const around = (n: number, center: number, scale: number) => Float32Array.from({ length: n }, () => center + (rand() * 2 - 1) * scale);
  const s = 1 / Math.sqrt(H);
  return {
    hidden: H,
    ffn: F,
    word: mat(o.vocabSize * H, 1),
    pos: mat(o.maxPositions * H, 0.5),
    type: o.tokenTypeIds ? mat(2 * H, 0.5) : null,
    ln1g: around(H, 1, 0.2),
    ln1b: mat(H, 0.1),
    wq: mat(H * H, 2 * s),
    wk: mat(H * H, 2 * s),
    wv: mat(H * H, s),
    wo: mat(H * H, s),
    ln2g: around(H, 1, 0.2),
    ln2b: mat(H, 0.1),
    w1: mat(H * F, s),
    w2: mat(F * H, 1 / Math.sqrt(F)),
    wp: mat(H * H, s),
  };
}

const T = onnx.TensorProto.DataType;

function floatTensor(name: string, dims: number[], data: Float32Array): onnx.ITensorProto {
  return { name, dims, dataType: T.FLOAT, floatData: Array.from(data) };
}
function int64Tensor(name: string, dims: number[], data: number[]): onnx.ITensorProto {
  return { name, dims, dataType: T.INT64, int64Data: data };
}
function node(opType: string, inputs: string[], outputs: string[], attrs: onnx.IAttributeProto[] = []): onnx.INodeProto {
  return { opType, input: inputs, output: outputs, attribute: attrs, name: outputs[0] };
}
const intAttr = (name: string, i: number): onnx.IAttributeProto => ({ name, type: onnx.AttributeProto.AttributeType.INT, i });
const floatAttr = (name: string, f: number): onnx.IAttributeProto => ({ name, type: onnx.AttributeProto.AttributeType.FLOAT, f });
const intsAttr = (name: string, ints: number[]): onnx.IAttributeProto => ({ name, type: onnx.AttributeProto.AttributeType.INTS, ints });

function valueInfo(name: string, elemType: number, dims: (number | string)[]): onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

/** Serialized model.onnx bytes for the given options and weights. */
export function buildTinyBertOnnx(o: TinyBertOptions, w: TinyBertWeights): Uint8Array {
  const H = o.hidden;
  const F = w.ffn;
  const intType = o.inputType === 'int32' ? T.INT32 : T.INT64;
  const seq: number | string = o.fixedSeq ?? 'seq';
  const nodes: onnx.INodeProto[] = [];
  const inits: onnx.ITensorProto[] = [
    floatTensor('pos_emb', [o.maxPositions, H], w.pos),
    floatTensor('ln1_g', [H], w.ln1g),
    floatTensor('ln1_b', [H], w.ln1b),
    floatTensor('wq', [H, H], w.wq),
    floatTensor('wk', [H, H], w.wk),
    floatTensor('wv', [H, H], w.wv),
    floatTensor('wo', [H, H], w.wo),
    floatTensor('ln2_g', [H], w.ln2g),
    floatTensor('ln2_b', [H], w.ln2b),
    floatTensor('w1', [H, F], w.w1),
    floatTensor('w2', [F, H], w.w2),
    floatTensor('wp', [H, H], w.wp),
    floatTensor('scale', [], Float32Array.of(1 / Math.sqrt(H))),
    floatTensor('one', [], Float32Array.of(1)),
    floatTensor('neg_big', [], Float32Array.of(-10000)),
    int64Tensor('zero_i', [], [0]),
    int64Tensor('one_i', [], [1]),
    int64Tensor('axes_1', [1], [1]),
  ];
  const wordTensor = floatTensor('word_emb', [o.vocabSize, H], w.word);
  if (o.embeddingsAsConstant) {
    nodes.push(node('Constant', [], ['word_emb'], [{ name: 'value', type: onnx.AttributeProto.AttributeType.TENSOR, t: wordTensor }]));
  } else {
    inits.push(wordTensor);
  }
  let ids = 'input_ids';
  let types = 'token_type_ids';
  if (intType === T.INT32) {
    nodes.push(node('Cast', ['input_ids'], ['ids64'], [intAttr('to', T.INT64)]));
    ids = 'ids64';
    if (o.tokenTypeIds) {
      nodes.push(node('Cast', ['token_type_ids'], ['types64'], [intAttr('to', T.INT64)]));
      types = 'types64';
    }
  }
  nodes.push(
    node('Gather', ['word_emb', ids], ['we']),
    node('Shape', [ids], ['ids_shape']),
    node('Gather', ['ids_shape', 'one_i'], ['seq_len']),
    node('Range', ['zero_i', 'seq_len', 'one_i'], ['positions']),
    node('Gather', ['pos_emb', 'positions'], ['pe']),
    node('Add', ['we', 'pe'], ['x0a']),
  );
  let x0 = 'x0a';
  if (o.tokenTypeIds) {
    inits.push(floatTensor('type_emb', [2, H], w.type!));
    nodes.push(node('Gather', ['type_emb', types], ['te']), node('Add', ['x0a', 'te'], ['x0b']));
    x0 = 'x0b';
  }
  nodes.push(
    node('LayerNormalization', [x0, 'ln1_g', 'ln1_b'], ['x'], [intAttr('axis', -1), floatAttr('epsilon', EPS)]),
    node('MatMul', ['x', 'wq'], ['q']),
    node('MatMul', ['x', 'wk'], ['k']),
    node('MatMul', ['x', 'wv'], ['v']),
    node('Transpose', ['k'], ['kt'], [intsAttr('perm', [0, 2, 1])]),
    node('MatMul', ['q', 'kt'], ['scores_raw']),
    node('Mul', ['scores_raw', 'scale'], ['scores']),
    // Padding positions get -10000 added before softmax, as BERT does.
    node('Cast', ['attention_mask'], ['mask_f'], [intAttr('to', T.FLOAT)]),
    node('Unsqueeze', ['mask_f', 'axes_1'], ['mask_b']),
    node('Sub', ['one', 'mask_b'], ['mask_inv']),
    node('Mul', ['mask_inv', 'neg_big'], ['mask_bias']),
    node('Add', ['scores', 'mask_bias'], ['scores_masked']),
    node('Softmax', ['scores_masked'], ['probs'], [intAttr('axis', -1)]),
    node('MatMul', ['probs', 'v'], ['ctx']),
    node('MatMul', ['ctx', 'wo'], ['attn']),
    node('Add', ['x', 'attn'], ['res1']),
    node('LayerNormalization', ['res1', 'ln2_g', 'ln2_b'], ['h'], [intAttr('axis', -1), floatAttr('epsilon', EPS)]),
    node('MatMul', ['h', 'w1'], ['f1']),
    node('Tanh', ['f1'], ['f1t']),
    node('MatMul', ['f1t', 'w2'], ['f2']),
    node('Add', ['h', 'f2'], [o.symbolicHidden ? 'hs' : 'last_hidden_state']),
  );
  if (o.symbolicHidden) {
    // ORT infers H through MatMul even when the output declares a symbolic dim; a Reshape to a shape
    // computed by an op without shape-data propagation (Abs) hides it for real.
    nodes.push(
      node('Shape', ['hs'], ['hs_shape']),
      node('Abs', ['hs_shape'], ['hs_shape_abs']),
      node('Reshape', ['hs', 'hs_shape_abs'], ['last_hidden_state']),
    );
  }
  const hiddenDim: number | string = o.symbolicHidden ? 'hidden' : H;
  let outputs: onnx.IValueInfoProto[];
  if (o.output === 'pooler_output') {
    nodes.push(
      node('Gather', ['last_hidden_state', 'zero_i'], ['cls'], [intAttr('axis', 1)]),
      node('MatMul', ['cls', 'wp'], ['pooled']),
      node('Tanh', ['pooled'], ['pooler_output']),
    );
    outputs = [valueInfo('pooler_output', T.FLOAT, ['batch', hiddenDim])];
  } else {
    outputs = [valueInfo('last_hidden_state', T.FLOAT, ['batch', seq, hiddenDim])];
  }
  const inputs = [valueInfo('input_ids', intType, ['batch', seq]), valueInfo('attention_mask', intType, ['batch', seq])];
  if (o.tokenTypeIds) inputs.push(valueInfo('token_type_ids', intType, ['batch', seq]));
  const model: onnx.IModelProto = {
    irVersion: 8,
    producerName: 'dhr-tiny-bert-fixture',
    opsetImport: [{ domain: '', version: 17 }],
    graph: { name: 'tiny_bert', node: nodes, initializer: inits, input: inputs, output: outputs },
  };
  return onnx.ModelProto.encode(model).finish();
}

// ---- The same math in plain JS (float64), for one unpadded sequence. ----

type Mat = number[][];

const row = (flat: Float32Array, i: number, width: number): number[] => Array.from(flat.subarray(i * width, (i + 1) * width));

function matmul(a: Mat, b: Float32Array, cols: number): Mat {
  const inner = a[0]!.length;
  return a.map((r) => {
    const out = new Array<number>(cols).fill(0);
    for (let k = 0; k < inner; k++) for (let j = 0; j < cols; j++) out[j]! += r[k]! * b[k * cols + j]!;
    return out;
  });
}

function layerNorm(a: Mat, g: Float32Array, b: Float32Array): Mat {
  return a.map((r) => {
    const mean = r.reduce((s, v) => s + v, 0) / r.length;
    const variance = r.reduce((s, v) => s + (v - mean) ** 2, 0) / r.length;
    return r.map((v, j) => ((v - mean) / Math.sqrt(variance + EPS)) * g[j]! + b[j]!);
  });
}

const add = (a: Mat, b: Mat): Mat => a.map((r, i) => r.map((v, j) => v + b[i]![j]!));

/** Hidden states [S][H] for token ids (no padding), exactly as the ONNX graph computes them. */
export function referenceHidden(w: TinyBertWeights, ids: number[]): Mat {
  const H = w.hidden;
  let x: Mat = ids.map((id, p) => {
    const we = row(w.word, id, H);
    const pe = row(w.pos, p, H);
    const te = w.type ? row(w.type, 0, H) : new Array<number>(H).fill(0);
    return we.map((v, j) => v + pe[j]! + te[j]!);
  });
  x = layerNorm(x, w.ln1g, w.ln1b);
  const q = matmul(x, w.wq, H);
  const k = matmul(x, w.wk, H);
  const v = matmul(x, w.wv, H);
  const ctx = q.map((qi) => {
    const scores = k.map((kj) => qi.reduce((s, qv, d) => s + qv * kj[d]!, 0) / Math.sqrt(H));
    const max = Math.max(...scores);
    const e = scores.map((s) => Math.exp(s - max));
    const z = e.reduce((s, a) => s + a, 0);
    return v[0]!.map((_, d) => e.reduce((s, p, j) => s + (p / z) * v[j]![d]!, 0));
  });
  const h = layerNorm(add(x, matmul(ctx, w.wo, H)), w.ln2g, w.ln2b);
  const f = matmul(
    matmul(h, w.w1, w.ffn).map((r) => r.map(Math.tanh)),
    w.w2,
    H,
  );
  return add(h, f);
}

/** BERT pooler: tanh(CLS · Wp). */
export function referencePooler(w: TinyBertWeights, ids: number[]): number[] {
  const cls = referenceHidden(w, ids)[0]!;
  return matmul([cls], w.wp, w.hidden)[0]!.map(Math.tanh);
}
