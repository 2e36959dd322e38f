/** The files of a custom model folder: where they are, that they exist, and their checksum. */
import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { EncoderError } from '../types';

export const MODEL_FILE = 'model.onnx';
export const TOKENIZER_FILE = 'tokenizer.json';
export const CONFIG_FILE = 'dhr-model.json';

export interface ModelFiles {
  dir: string;
  model: string;
  tokenizer: string;
  config: string;
}

export function modelFiles(dir: string): ModelFiles {
  const abs = resolve(dir);
  return { dir: abs, model: join(abs, MODEL_FILE), tokenizer: join(abs, TOKENIZER_FILE), config: join(abs, CONFIG_FILE) };
}

/** Until dhr-model.json is read, errors name the model by its folder. */
export const folderName = (files: ModelFiles): string => basename(files.dir);

/** Fails with one error naming the first missing piece, so a wrong path is obvious. */
export async function checkFilesExist(files: ModelFiles): Promise<void> {
  const name = folderName(files);
  const dir = await stat(files.dir).catch(() => null);
  if (!dir?.isDirectory()) throw new EncoderError(name, `model folder ${files.dir} does not exist or is not a directory`);
  for (const file of [files.config, files.model, files.tokenizer]) {
    const s = await stat(file).catch(() => null);
    if (!s?.isFile()) throw new EncoderError(name, `${file} is missing (a custom model folder needs ${MODEL_FILE}, ${TOKENIZER_FILE} and ${CONFIG_FILE})`);
  }
}

/** sha256 over the file contents in the order given (model.onnx, tokenizer.json, dhr-model.json). */
export function sha256(contents: readonly Uint8Array[]): string {
  const hash = createHash('sha256');
  for (const c of contents) hash.update(c);
  return hash.digest('hex');
}
