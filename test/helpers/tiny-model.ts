import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildTinyBertOnnx, makeWeights } from './tiny-bert';
import { tinyTokenizerJson, VOCAB } from './tiny-tokenizer';

/**
 * Writes a tiny BERT-shaped model folder (model.onnx, tokenizer.json, dhr-model.json) built by the
 * test itself: a real custom model, fast enough to embed a corpus many times in a test.
 */
export async function writeTinyModel(root: string, name: string, options: { hidden?: number; seed?: number } = {}): Promise<string> {
  const dir = join(root, name);
  const model = { vocabSize: Object.keys(VOCAB).length, hidden: options.hidden ?? 8, maxPositions: 64, seed: options.seed ?? 7, tokenTypeIds: true };
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'model.onnx'), buildTinyBertOnnx(model, makeWeights(model)));
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  await writeFile(
    join(dir, 'dhr-model.json'),
    JSON.stringify({ name, pooling: 'mean', normalize: true, maxTokens: { question: 32, document: 62, passage: 62 } }),
  );
  return dir;
}
