/**
 * The onnxruntime side of a transformer encoder: open the session, work out which inputs the model
 * declares (and their integer type), build padded feeds, and pick the output to read.
 */
import * as ort from 'onnxruntime-node';
import { EncoderError } from '../types';

type IntType = 'int32' | 'int64';

export interface ModelInput {
  name: string;
  type: IntType;
  /** What to feed: token ids, 1/0 mask, zeros (token types) or 0..S-1 (positions). */
  role: 'ids' | 'mask' | 'zeros' | 'positions';
}

export interface ModelIO {
  inputs: ModelInput[];
  /** A fixed sequence length the model was exported with: every batch is padded to it. */
  fixedSeq: number | undefined;
  output: string;
  /** 3 → token states to pool, 2 → a ready sentence embedding; undefined → decided from the result. */
  outputRank: number | undefined;
  /** The embedding size, when the output shape states it. */
  outputDim: number | undefined;
}

const INPUT_ROLES: Record<string, ModelInput['role']> = {
  input_ids: 'ids',
  attention_mask: 'mask',
  token_type_ids: 'zeros',
  position_ids: 'positions',
};

/** Preferred outputs, best first: a model's own sentence embedding, then token states to pool. */
const SENTENCE_OUTPUTS = ['sentence_embedding', 'sentence_embeddings'];
const TOKEN_OUTPUTS = ['last_hidden_state', 'token_embeddings'];

const tensorMeta = (m: ort.InferenceSession.ValueMetadata) => (m.isTensor ? m : undefined);

export function describeIO(session: ort.InferenceSession, file: string, model: string): ModelIO {
  const inputs: ModelInput[] = [];
  let fixedSeq: number | undefined;
  for (const meta of session.inputMetadata) {
    const role = INPUT_ROLES[meta.name];
    if (!role) {
      const names = session.inputMetadata.map((m) => m.name).join(', ');
      throw new EncoderError(model, `${file} has input "${meta.name}" that DHR cannot feed (inputs: ${names}; known: ${Object.keys(INPUT_ROLES).join(', ')})`);
    }
    const t = tensorMeta(meta);
    const type = t?.type ?? 'int64';
    if (type !== 'int64' && type !== 'int32') throw new EncoderError(model, `${file}: input "${meta.name}" is ${type}; expected int64 or int32`);
    inputs.push({ name: meta.name, type, role });
    const seq = t?.shape[1];
    if (typeof seq === 'number' && seq > 0) fixedSeq = Math.min(fixedSeq ?? seq, seq);
  }
  if (!inputs.some((i) => i.role === 'ids')) {
    throw new EncoderError(model, `${file} has no "input_ids" input (inputs: ${session.inputMetadata.map((m) => m.name).join(', ')})`);
  }

  const outputs = session.outputMetadata;
  const rank = (name: string) => tensorMeta(outputs.find((o) => o.name === name)!)?.shape.length || undefined;
  const named = [...SENTENCE_OUTPUTS, ...TOKEN_OUTPUTS].find((n) => outputs.some((o) => o.name === n));
  // Otherwise: the first 3-D output (token states), else the first output (e.g. pooler_output).
  const output = named ?? outputs.find((o) => rank(o.name) === 3)?.name ?? outputs[0]?.name;
  if (output === undefined) throw new EncoderError(model, `${file} declares no outputs`);
  const outputRank = rank(output);
  if (outputRank !== undefined && outputRank !== 2 && outputRank !== 3) {
    throw new EncoderError(model, `${file}: output "${output}" has ${outputRank} dims; expected [batch, hidden] or [batch, seq, hidden]`);
  }
  const last = tensorMeta(outputs.find((o) => o.name === output)!)?.shape.at(-1);
  return { inputs, fixedSeq, output, outputRank, outputDim: typeof last === 'number' && last > 0 ? last : undefined };
}

/** Right-padded feeds for a batch of id sequences; the mask keeps padding out of attention and pooling. */
export function buildFeeds(io: ModelIO, batch: readonly number[][], padId: number): Record<string, ort.Tensor> {
  const seq = io.fixedSeq ?? Math.max(1, ...batch.map((ids) => ids.length));
  const size = batch.length * seq;
  const feeds: Record<string, ort.Tensor> = {};
  for (const input of io.inputs) {
    const values = new Array<number>(size).fill(input.role === 'ids' ? padId : 0);
    batch.forEach((ids, b) => {
      for (let p = 0; p < seq; p++) {
        const at = b * seq + p;
        if (input.role === 'ids' && p < ids.length) values[at] = ids[p];
        else if (input.role === 'mask') values[at] = p < ids.length ? 1 : 0;
        else if (input.role === 'positions') values[at] = p;
      }
    });
    const data = input.type === 'int64' ? BigInt64Array.from(values, (v) => BigInt(v)) : Int32Array.from(values);
    feeds[input.name] = new ort.Tensor(input.type, data, [batch.length, seq]);
  }
  return feeds;
}
