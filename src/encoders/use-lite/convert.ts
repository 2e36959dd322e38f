/**
 * TF.js graph model (model.json + weight shards) of USE-lite → ONNX ModelProto (opset 17).
 *
 * The TF graph is translated node by node (only nodes reachable from the output), so the ONNX
 * model computes exactly what TF.js computes, including the dynamic-shape glue
 * (Shape/StridedSlice/Pack/Reshape). Only the sparse input section is replaced:
 *
 *   TF:   indices[N,2], values[N] --ClipToMaxLength(col<128)--> SparseToDense(default -1)
 *   ONNX: input_ids[B,S] int32, attention_mask[B,S] int32
 *         dense  = Where(mask[:, :128] != 0, ids[:, :128], -1)       (replaces SparseToDense)
 *         values = GatherND(dense, Where(dense > -1))                (replaces the clipped values)
 *
 * Using the input's own [B,S] as the dense shape (not max(indices)+1) keeps one output row per
 * input row even when trailing rows are empty (the TF.js reference drops those rows). Padding
 * columns do not change results: attention masks them (bias -1e9), the FFN gather/scatter skips
 * them and pooling uses a length mask.
 *
 * The converter is deliberately narrow: anything it was not written for (non-1x1 Conv2D, dynamic
 * axes, quantized weights, another max length...) throws an EncoderError naming the node or file
 * instead of drifting silently. Integer tensors are int64 in ONNX (Shape/Reshape/GatherND want it).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { onnx } from 'onnx-proto';
import { EncoderError } from '../types';

const MODEL = 'use-lite';
const T = onnx.TensorProto.DataType;
const A = onnx.AttributeProto.AttributeType;
const INT_MAX = 2 ** 31 - 1; // "to the end" for Slice
export const USE_LITE_MAX_LEN = 128; // the graph's ClipToMaxLength; asserted below
export const USE_LITE_DIM = 512;
const OUTPUT_NODE = 'module_apply_default/Encoder_en/hidden_layers/l2_normalize';
const TF_SHARD_BYTES = 4 * 1024 * 1024; // tfjs-converter's default shard size

// model.json attrs are loosely typed JSON
type TFNode = { name: string; op: string; input?: string[]; attr?: Record<string, any> };
type Weight = { dtype: string; shape: number[]; data: Float32Array | Int32Array };
interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: unknown;
}
interface WeightGroup {
  paths: string[];
  weights: WeightSpec[];
}
export interface TfjsManifest {
  nodes: TFNode[];
  groups: WeightGroup[];
}

const fail = (problem: string): never => {
  throw new EncoderError(MODEL, problem);
};

/** Parses model.json and checks its top-level shape; EncoderError naming the file otherwise. */
export function readTfjsManifest(modelDir: string): TfjsManifest {
  const file = join(modelDir, 'model.json');
  let json: any;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    return fail(`cannot read ${file}: ${(e as Error).message}`);
  }
  const nodes = json?.modelTopology?.node;
  const groups = json?.weightsManifest;
  if (!Array.isArray(nodes) || !Array.isArray(groups) || groups.some((g: any) => !Array.isArray(g?.paths) || !Array.isArray(g?.weights)))
    fail(`${file} is not a TF.js graph model (modelTopology.node / weightsManifest missing)`);
  return { nodes, groups };
}

/** The weight shard files named by model.json, as paths under modelDir. */
export const shardFiles = (modelDir: string, m: TfjsManifest): string[] => m.groups.flatMap((g) => g.paths.map((p) => join(modelDir, p)));

/**
 * Checks each shard's size before reading. Shard sizes are not in the manifest; tfjs-converter
 * cuts the group's bytes into 4 MiB pieces, so when the count fits we know each shard's size and
 * can name the bad one; otherwise only the group total is checked.
 */
function checkShardSizes(modelDir: string, g: WeightGroup, expectedBytes: number): void {
  const files = g.paths.map((p) => join(modelDir, p));
  const sizes = files.map((f) => {
    try {
      return statSync(f).size;
    } catch (e) {
      return fail(`weight shard ${f} is missing or unreadable: ${(e as Error).message}`);
    }
  });
  if (Math.ceil(expectedBytes / TF_SHARD_BYTES) === files.length) {
    files.forEach((f, i) => {
      const want = Math.min(TF_SHARD_BYTES, expectedBytes - i * TF_SHARD_BYTES);
      if (sizes[i] !== want) fail(`weight shard ${f} has ${sizes[i]} bytes, expected ${want}`);
    });
  } else if (sizes.reduce((a, b) => a + b, 0) !== expectedBytes) {
    fail(`weight shards ${files.join(', ')} hold ${sizes.reduce((a, b) => a + b, 0)} bytes, model.json needs ${expectedBytes}`);
  }
}

function loadWeights(modelDir: string, m: TfjsManifest): Map<string, Weight> {
  const weights = new Map<string, Weight>();
  for (const g of m.groups) {
    for (const w of g.weights) {
      if (w.quantization) fail(`quantized weight ${w.name} not supported`);
      if (w.dtype !== 'float32' && w.dtype !== 'int32') fail(`dtype ${w.dtype} of weight ${w.name} not supported`);
    }
    const total = g.weights.reduce((a, w) => a + 4 * w.shape.reduce((x, y) => x * y, 1), 0);
    checkShardSizes(modelDir, g, total);
    const buf = Buffer.concat(g.paths.map((p) => readFileSync(join(modelDir, p))));
    let off = 0;
    for (const w of g.weights) {
      const n = w.shape.reduce((a, b) => a * b, 1);
      const bytes = buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + n * 4);
      const data = w.dtype === 'float32' ? new Float32Array(bytes) : new Int32Array(bytes);
      weights.set(w.name, { dtype: w.dtype, shape: w.shape, data });
      off += n * 4;
    }
  }
  return weights;
}

// --- TF.js model.json attribute helpers ---
const TF2ONNX: Record<number, number> = { 1: T.FLOAT, 3: T.INT64, 9: T.INT64, 10: T.BOOL };
const ai = (n: TFNode, k: string, d = 0): number => (n.attr?.[k]?.i !== undefined ? Number(n.attr[k].i) : d);
const ab = (n: TFNode, k: string): boolean => !!n.attr?.[k]?.b;
const al = (n: TFNode, k: string): number[] => ((n.attr?.[k]?.list?.i ?? []) as unknown[]).map(Number);
const at = (n: TFNode, k: string): number => n.attr?.[k]?.type as number;

/** Converts the TF.js model in modelDir (model.json + shards) to ONNX bytes. */
export function convertUseLite(modelDir: string): Uint8Array {
  const manifest = readTfjsManifest(modelDir);
  const weights = loadWeights(modelDir, manifest);
  const byName = new Map(manifest.nodes.map((n) => [n.name, n]));
  const nodes: onnx.INodeProto[] = [];
  const inits: onnx.ITensorProto[] = [];
  const emitted = new Map<string, string>(); // TF tensor ref -> ONNX value name
  let uid = 0;
  const tmp = (base: string): string => `${base}__${uid++}`;

  const node = (op: string, inputs: string[], out: string, attrs: onnx.IAttributeProto[] = [], outs?: string[]): string => {
    nodes.push({ opType: op, input: inputs, output: outs ?? [out], name: tmp(op), attribute: attrs });
    return out;
  };
  const ints = (name: string, v: number[]): onnx.IAttributeProto => ({ name, type: A.INTS, ints: v });
  const int = (name: string, v: number): onnx.IAttributeProto => ({ name, type: A.INT, i: v });
  const initI64 = (name: string, v: ArrayLike<number>, dims: number[]): string => {
    const b = new BigInt64Array(v.length);
    for (let i = 0; i < v.length; i++) b[i] = BigInt(v[i]);
    inits.push({ name, dataType: T.INT64, dims, rawData: new Uint8Array(b.buffer) });
    return name;
  };
  const initF32 = (name: string, v: Float32Array, dims: number[]): string => {
    inits.push({ name, dataType: T.FLOAT, dims, rawData: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) });
    return name;
  };
  const constI64 = (v: number[], scalar = false): string => initI64(tmp('c'), v, scalar ? [] : [v.length]);

  /** Value of a TF Const (needed where ONNX wants attributes, e.g. perm/axes). */
  const constVal = (ref: string, user: string): number[] => {
    const w = weights.get(ref.split(':')[0]);
    if (!w) return fail(`node ${user}: expected a constant input, got ${ref}`);
    return Array.from(w.data);
  };

  // ---- replaced input section ----
  const P = 'module_apply_default/Encoder_en/KonaTransformer/';
  const clipNode = P + 'ClipToMaxLength/Less/y';
  const defaultNode = P + 'Encode/SparseToDense/default_value';
  if (constVal(clipNode, clipNode)[0] !== USE_LITE_MAX_LEN) fail(`node ${clipNode}: max length is not ${USE_LITE_MAX_LEN}`);
  if (constVal(defaultNode, defaultNode)[0] !== -1) fail(`node ${defaultNode}: SparseToDense default is not -1`);
  const sl = (x: string): string => node('Slice', [x, constI64([0]), constI64([USE_LITE_MAX_LEN]), constI64([1])], tmp('clip'));
  const ids = node('Cast', [sl('input_ids')], 'ids_i64', [int('to', T.INT64)]);
  const m = node('Cast', [sl('attention_mask')], 'mask_bool', [int('to', T.BOOL)]);
  const dense = node('Where', [m, ids, constI64([-1], true)], 'dense_ids');
  emitted.set(P + 'Encode/SparseToDense', dense);
  const REPLACED_VALUES = P + 'ClipToMaxLength/GatherV2_1';
  const STORE_WHERE = P + 'Encode/TransformerStack/Layer_1/TransformerLayer/FFN/StoreMask/Where';

  const emit = (ref: string): string => {
    const key = ref.endsWith(':0') ? ref.slice(0, -2) : ref;
    const got = emitted.get(key);
    if (got) return got;
    const [name, idxStr] = key.split(':');
    if (idxStr) {
      emit(name); // multi-output node: emitted with its siblings
      return emitted.get(key) ?? fail(`node ${name} has no output ${idxStr}`);
    }
    if (name === REPLACED_VALUES) {
      const v = node('GatherND', [dense, emit(STORE_WHERE)], 'token_values');
      emitted.set(name, v);
      return v;
    }
    const n = byName.get(name) ?? fail(`unknown node ${name}`);
    const input = n.input ?? [];
    const out = name; // keep TF names: ORT errors then point at the TF node
    const inp = (i: number): string => emit(input[i]);
    const cv = (i: number): number[] => constVal(input[i], name);
    let r: string;
    switch (n.op) {
      case 'Const': {
        const w = weights.get(name) ?? fail(`Const node ${name} has no weight in the manifest`);
        r = w.dtype === 'float32' ? initF32(name, w.data as Float32Array, w.shape) : initI64(name, w.data, w.shape);
        break;
      }
      case 'Placeholder':
        return fail(`raw TF input ${name} reached: input replacement incomplete`);
      case 'Add':
      case 'Sub':
      case 'Mul':
      case 'Less':
      case 'Greater':
      case 'Relu':
      case 'Tanh':
      case 'Sin':
      case 'Cos':
      case 'Softmax': // TF softmax = last axis = ONNX opset>=13 default
        r = node(
          n.op,
          input.map((_, i) => inp(i)),
          out,
        );
        break;
      case 'BiasAdd':
        r = node('Add', [inp(0), inp(1)], out);
        break; // NHWC: bias on the last dim
      case 'RealDiv':
        r = node('Div', [inp(0), inp(1)], out);
        break;
      case 'Maximum':
        r = node('Max', [inp(0), inp(1)], out);
        break;
      case 'LogicalNot':
        r = node('Not', [inp(0)], out);
        break;
      case 'Square': {
        const x = inp(0);
        r = node('Mul', [x, x], out);
        break;
      }
      case 'Rsqrt':
        r = node('Reciprocal', [node('Sqrt', [inp(0)], tmp(out))], out);
        break;
      case 'Cast': {
        const to = TF2ONNX[at(n, 'DstT')] ?? fail(`node ${name}: Cast to TF dtype ${at(n, 'DstT')} not supported`);
        r = node('Cast', [inp(0)], out, [int('to', to)]);
        break;
      }
      case 'Shape':
        r = node('Shape', [inp(0)], out);
        break;
      case 'Range':
        r = node('Range', [inp(0), inp(1), inp(2)], out);
        break;
      // allowzero: TF treats a 0 in the target shape literally (matters when a batch has no token)
      case 'Reshape':
        r = node('Reshape', [inp(0), inp(1)], out, [int('allowzero', 1)]);
        break;
      case 'Transpose':
        r = node('Transpose', [inp(0)], out, [ints('perm', cv(1))]);
        break;
      case 'ExpandDims':
        r = node('Unsqueeze', [inp(0), constI64(cv(1))], out);
        break;
      case 'Squeeze': {
        const dims = al(n, 'squeeze_dims');
        r = node('Squeeze', dims.length ? [inp(0), constI64(dims)] : [inp(0)], out);
        break;
      }
      case 'GatherV2':
        r = node('Gather', [inp(0), inp(1)], out, [int('axis', cv(2)[0])]);
        break;
      case 'GatherNd':
        r = node('GatherND', [inp(0), inp(1)], out);
        break;
      case 'ScatterNd': {
        // TF ScatterNd(indices, updates, shape) = zeros(shape) with updates written (indices are unique here)
        const zeros = node('ConstantOfShape', [inp(2)], tmp(out), [{ name: 'value', type: A.TENSOR, t: { dataType: T.FLOAT, dims: [1], floatData: [0] } }]);
        r = node('ScatterND', [zeros, inp(0), inp(1)], out);
        break;
      }
      case 'Where': {
        // 1-input TF Where = coordinates of true elements, int64 [N, rank]
        if (input.length !== 1) fail(`node ${name}: 3-input Where (select) not supported`);
        r = node('Transpose', [node('NonZero', [inp(0)], tmp(out))], out, [ints('perm', [1, 0])]);
        break;
      }
      case 'Sum':
      case 'Mean':
      case 'Max':
      case 'Prod': {
        const axes = cv(1);
        const keep = ab(n, 'keep_dims') ? 1 : 0;
        const op = { Sum: 'ReduceSum', Mean: 'ReduceMean', Max: 'ReduceMax', Prod: 'ReduceProd' }[n.op];
        // opset 17: only ReduceSum takes axes as an input; the others take an attribute
        r =
          op === 'ReduceSum'
            ? node(op, [inp(0), constI64(axes)], out, [int('keepdims', keep)])
            : node(op, [inp(0)], out, [ints('axes', axes), int('keepdims', keep)]);
        break;
      }
      case 'ConcatV2': {
        const k = input.length - 1;
        r = node(
          'Concat',
          input.slice(0, k).map((_, i) => inp(i)),
          out,
          [int('axis', cv(k)[0])],
        );
        break;
      }
      case 'Pack': {
        const axis = ai(n, 'axis');
        const parts = input.map((_, i) => node('Unsqueeze', [inp(i), constI64([axis])], tmp(out)));
        r = node('Concat', parts, out, [int('axis', axis)]);
        break;
      }
      case 'SplitV': {
        const sizes = cv(1);
        const axis = cv(2)[0];
        const outs = sizes.map((_, i) => (i === 0 ? out : `${out}:${i}`));
        node('Split', [inp(0), constI64(sizes)], out, [int('axis', axis)], outs);
        outs.forEach((o, i) => emitted.set(i === 0 ? name : `${name}:${i}`, o));
        r = out;
        break;
      }
      case 'Slice': {
        // TF Slice(x, begin, size); size -1 = to the end
        const b = cv(1),
          s = cv(2);
        const e = s.map((v, i) => (v === -1 ? INT_MAX : b[i] + v));
        r = node('Slice', [inp(0), constI64(b), constI64(e)], out);
        break;
      }
      case 'StridedSlice': {
        if (ai(n, 'ellipsis_mask') || ai(n, 'new_axis_mask')) fail(`node ${name}: StridedSlice ellipsis/new-axis masks not supported`);
        const b = cv(1),
          e = cv(2),
          st = cv(3);
        const bm = ai(n, 'begin_mask'),
          em = ai(n, 'end_mask'),
          sm = ai(n, 'shrink_axis_mask');
        const starts: number[] = [],
          ends: number[] = [],
          shrink: number[] = [];
        b.forEach((_, i) => {
          const pos = st[i] > 0;
          starts.push(bm & (1 << i) ? (pos ? 0 : INT_MAX) : b[i]);
          if (sm & (1 << i)) {
            ends.push(b[i] === -1 ? INT_MAX : b[i] + 1);
            shrink.push(i);
          } else ends.push(em & (1 << i) ? (pos ? INT_MAX : -INT_MAX) : e[i]);
        });
        const axes = b.map((_, i) => i);
        const s = node('Slice', [inp(0), constI64(starts), constI64(ends), constI64(axes), constI64(st)], shrink.length ? tmp(out) : out);
        r = shrink.length ? node('Squeeze', [s, constI64(shrink)], out) : s;
        break;
      }
      case 'MatMul': {
        let a = inp(0),
          b = inp(1);
        if (ab(n, 'transpose_a')) a = node('Transpose', [a], tmp(out), [ints('perm', [1, 0])]);
        if (ab(n, 'transpose_b')) b = node('Transpose', [b], tmp(out), [ints('perm', [1, 0])]);
        r = node('MatMul', [a, b], out);
        break;
      }
      case 'BatchMatMul':
      case 'BatchMatMulV2': {
        // every BatchMatMul in this graph is rank 4 [B,H,S,D]
        let a = inp(0),
          b = inp(1);
        if (ab(n, 'adj_x')) a = node('Transpose', [a], tmp(out), [ints('perm', [0, 1, 3, 2])]);
        if (ab(n, 'adj_y')) b = node('Transpose', [b], tmp(out), [ints('perm', [0, 1, 3, 2])]);
        r = node('MatMul', [a, b], out);
        break;
      }
      case 'Conv2D': {
        // only 1x1 / stride 1 / NHWC kernels occur: a MatMul over the channel (last) dim
        const kname = input[1];
        const w = weights.get(kname) ?? fail(`node ${name}: Conv2D kernel ${kname} is not a constant`);
        const [kh, kw, cin, cout] = w.shape;
        if (w.shape.length !== 4 || kh !== 1 || kw !== 1 || al(n, 'strides').some((s) => s !== 1) || al(n, 'dilations').some((d) => d !== 1))
          fail(`node ${name}: only 1x1 stride-1 Conv2D is supported`);
        if (!emitted.has(kname)) emitted.set(kname, initF32(kname, w.data as Float32Array, [cin, cout]));
        r = node('MatMul', [inp(0), emitted.get(kname) as string], out);
        break;
      }
      default:
        return fail(`node ${name}: unsupported TF op ${n.op}`);
    }
    emitted.set(name, r);
    return r;
  };

  const final = emit(OUTPUT_NODE);
  node('Identity', [final], 'embeddings');

  const dim = (p: string): onnx.TensorShapeProto.IDimension => ({ dimParam: p });
  const vi = (name: string, elem: number, dims: onnx.TensorShapeProto.IDimension[]): onnx.IValueInfoProto => ({
    name,
    type: { tensorType: { elemType: elem, shape: { dim: dims } } },
  });
  const model: onnx.IModelProto = {
    irVersion: 8,
    producerName: 'dhr-graphql use-lite convert',
    opsetImport: [{ domain: '', version: 17 }],
    graph: {
      name: 'use_lite',
      node: nodes,
      initializer: inits,
      input: [vi('input_ids', T.INT32, [dim('batch'), dim('seq')]), vi('attention_mask', T.INT32, [dim('batch'), dim('seq')])],
      output: [vi('embeddings', T.FLOAT, [dim('batch'), { dimValue: USE_LITE_DIM }])],
    },
  };
  return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
}
