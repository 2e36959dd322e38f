import type { Encoder } from '../../src/encoders/types';

/** A registry entry for synthetic vectors: tests insert the vectors directly, nothing is encoded. */
export function syntheticModel(name: string, dimension: number): Encoder {
  return {
    name,
    runtime: 'onnxruntime-node',
    dimension,
    checksum: name.padEnd(64, '0'),
    normalized: true,
    maxTokens: () => 128,
    countTokens: (text: string) => text.split(/\s+/).filter(Boolean).length,
    encode: () => Promise.reject(new Error('synthetic model: vectors are inserted directly')),
    close: async () => undefined,
  };
}
