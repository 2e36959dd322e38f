/** Reads the vocabulary size from an ONNX graph: the rows of the embedding table input_ids index. */
import { onnx } from 'onnx-proto';

/** Ops that pass ids (or weights) through unchanged in value, as exporters insert them. */
const ID_PASSTHROUGH = new Set(['Cast', 'Identity', 'Unsqueeze', 'Squeeze', 'Reshape', 'Flatten']);
const WEIGHT_PASSTHROUGH = new Set(['Identity', 'Cast', 'DequantizeLinear']);

/**
 * Rows of the table that a Gather indexes with `idsInput` (after casts/reshapes), or undefined when the
 * graph does not show it plainly (weights from a Constant node, external tooling, an undecodable file);
 * the caller then probes the model instead.
 */
export function embeddingRows(modelBytes: Uint8Array, idsInput: string): number | undefined {
  let graph: onnx.IGraphProto | null | undefined;
  try {
    graph = onnx.ModelProto.decode(modelBytes).graph;
  } catch {
    return undefined;
  }
  if (!graph) return undefined;
  const initializers = new Map((graph.initializer ?? []).map((t) => [t.name ?? '', t]));
  const producers = new Map<string, onnx.INodeProto>();
  for (const n of graph.node ?? []) for (const out of n.output ?? []) producers.set(out, n);

  const tableRows = (name: string, depth = 0): number | undefined => {
    const init = initializers.get(name);
    if (init) return init.dims && init.dims.length === 2 ? Number(init.dims[0]) : undefined;
    const producer = producers.get(name);
    if (!producer || depth > 4 || !WEIGHT_PASSTHROUGH.has(producer.opType ?? '')) return undefined;
    return tableRows(producer.input?.[0] ?? '', depth + 1);
  };

  // Walk forward from input_ids through pass-through ops; the first Gather on a 2-D table is the word embedding.
  const idNames = new Set([idsInput]);
  let rows: number | undefined;
  let grew = true;
  while (grew && rows === undefined) {
    grew = false;
    for (const n of graph.node ?? []) {
      const inputs = n.input ?? [];
      if (n.opType === 'Gather' && idNames.has(inputs[1] ?? '')) {
        rows ??= tableRows(inputs[0] ?? '');
      } else if (ID_PASSTHROUGH.has(n.opType ?? '') && idNames.has(inputs[0] ?? '')) {
        for (const out of n.output ?? []) {
          if (!idNames.has(out)) {
            idNames.add(out);
            grew = true;
          }
        }
      }
    }
  }
  return rows;
}
