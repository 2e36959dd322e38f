import { open, rename, rm } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Config } from '../config';
import { badUserInput, DomainError, messageOf } from '../errors';
import type { Database } from '../store/db';
import { openMigratedDatabase } from '../store/open';
import { importFeedbackFile } from '../training/feedback';
import { minePairs, type MineOptions } from '../training/mine';
import { PAIR_KINDS, type PairKind } from '../training/pair';
import { ProgressBar } from './progress';

/** Opens the store for one command; a DomainError (bad input, too few pairs) is exit code 1 with its message. */
async function withStore(config: Config, name: string, fn: (db: Database) => Promise<number>): Promise<number> {
  const db = await openMigratedDatabase(config);
  try {
    return await fn(db);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    console.error(`${name}: ${error.message}`);
    return 1;
  } finally {
    await db.close();
  }
}

/** Writes with backpressure, so a slow consumer (a pipe) never makes lines pile up in memory. */
async function writeLine(out: Writable, line: string): Promise<void> {
  if (!out.write(`${line}\n`)) await once(out, 'drain');
}

interface Output {
  write(line: string): Promise<void>;
  commit(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Where the lines go: stdout for "-" (or no --out), else a temporary file beside the target that
 * takes its name only once every pair is written, so a failed run leaves no half file. The file is
 * opened first, so a path that cannot be written is an error before any mining.
 */
async function openOutput(path: string | undefined): Promise<Output> {
  if (path === undefined || path === '-') {
    return { write: (line) => writeLine(process.stdout, line), commit: async () => undefined, abort: async () => undefined };
  }
  const temporary = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  let handle;
  try {
    handle = await open(temporary, 'w');
  } catch (error) {
    throw badUserInput(`cannot write ${path}: ${messageOf(error)}`, 'out');
  }
  const out = handle.createWriteStream({ encoding: 'utf8' });
  let failure: unknown;
  // A write error (disk full) surfaces at the next line or at commit, never as an unhandled event.
  out.on('error', (error) => (failure ??= error));
  return {
    write: async (line) => {
      if (failure) throw failure;
      await writeLine(out, line);
    },
    commit: async () => {
      await new Promise<void>((resolve) => out.end(resolve));
      if (failure) throw failure;
      await rename(temporary, path);
    },
    abort: async () => {
      out.destroy();
      await rm(temporary, { force: true });
    },
  };
}

export interface PairsCommandOptions extends Omit<MineOptions, 'onPlan'> {
  out?: string;
}

/** `dhr pairs`: training pairs as JSONL, with a progress bar and the count of each kind at the end. */
export function pairsCommand(config: Config, options: PairsCommandOptions): Promise<number> {
  return withStore(config, 'pairs', async (db) => {
    const counts = Object.fromEntries(PAIR_KINDS.map((k) => [k, 0])) as Record<PairKind, number>;
    let bar: ProgressBar | undefined;
    let written = 0;
    const pairs = minePairs(db, {
      ...options,
      bm25: options.bm25 ?? config.bm25,
      onPlan: (planned) =>
        (bar = new ProgressBar(
          Object.values(planned).reduce((a, b) => a + b, 0),
          'pairs',
        )),
    });
    // The plan (and a too-few error) comes with the first pair, before any file is made.
    const first = await pairs.next();
    const output = await openOutput(options.out);
    try {
      for (let next = first; !next.done; next = await pairs.next()) {
        await output.write(JSON.stringify(next.value));
        counts[next.value.kind] += 1;
        written += 1;
        bar?.update(written, next.value.kind);
      }
      await output.commit();
    } catch (error) {
      await output.abort();
      throw error;
    }
    bar?.finish();
    const kinds = options.kinds ?? PAIR_KINDS;
    console.error(
      `pairs: ${written} written${options.out && options.out !== '-' ? ` to ${options.out}` : ''} (${kinds.map((k) => `${k} ${counts[k]}`).join(', ')})`,
    );
    return 0;
  });
}

/** `dhr feedback import <file>`: every line or none. */
export function feedbackImportCommand(config: Config, path: string): Promise<number> {
  return withStore(config, 'feedback import', async (db) => {
    const { imported, relevant } = await importFeedbackFile(db, path);
    console.log(`imported ${imported} judgements (${relevant} relevant, ${imported - relevant} not relevant)`);
    return 0;
  });
}
