import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { DEFAULT_MODEL } from '../../encoders/spec';
import { CONFIG_FILE, MODEL_FILE, TOKENIZER_FILE } from '../../encoders/transformer/files';
import { DomainError, ErrorCode } from '../../errors';
import type { Database } from '../../store/db';
import type { EncoderSetOptions } from '../../encoders/set';
import type { EmbeddingModelRow } from '../../store/embeddings';
import { registerModelFromPath } from './models';

/** One answer for every path that is not a model folder: a caller learns nothing about the file system. */
export function notAModelFolder(): DomainError {
  return new DomainError(
    ErrorCode.BAD_USER_INPUT,
    `path is not a model folder in the models directory (MODELS_DIR): give the name of a folder there that holds ${MODEL_FILE}, ${TOKENIZER_FILE} and ${CONFIG_FILE}, or "${DEFAULT_MODEL}"`,
    { argument: 'path' },
  );
}

const inside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/**
 * The real path of a model folder that a remote caller names: relative paths are read inside
 * `modelsDir` (never the working directory), and the folder and its three files must resolve,
 * symlinks followed, to real paths inside the real `modelsDir`. Anything else is the one
 * notAModelFolder error. `use-lite` (shipped with the package) is always allowed.
 */
export async function confineModelFolder(modelsDir: string, path: string): Promise<string> {
  if (path === DEFAULT_MODEL) return path;
  const root = await realpath(modelsDir).catch(() => undefined);
  if (!root) throw notAModelFolder();
  const dir = await realpath(resolve(root, path)).catch(() => undefined);
  if (!dir || !inside(root, dir) || !(await stat(dir)).isDirectory()) throw notAModelFolder();
  for (const file of [MODEL_FILE, TOKENIZER_FILE, CONFIG_FILE]) {
    const real = await realpath(join(dir, file)).catch(() => undefined);
    if (!real || !inside(root, real) || !(await stat(real)).isFile()) throw notAModelFolder();
  }
  return dir;
}

/**
 * registerEmbeddingModel over the API: only folders inside `modelsDir`; a folder that does not
 * load is MODEL_INVALID with the models directory's location written as MODELS_DIR, so answers
 * carry no server paths.
 */
export async function registerModelInModelsDir(db: Database, modelsDir: string, path: string, options: EncoderSetOptions = {}): Promise<EmbeddingModelRow> {
  const folder = await confineModelFolder(modelsDir, path);
  try {
    return await registerModelFromPath(db, folder, options);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const root = await realpath(modelsDir);
    const message = error.message.split(root).join('MODELS_DIR');
    throw new DomainError(error.code, message, { argument: error.argument, details: error.details });
  }
}
