import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/paths';
import { cliEntry } from './cli-entry';
import { createProcessStore } from './database';

const run = promisify(execFile);

/** Runs the real CLI (the build, or the TypeScript through tsx: see cliEntry) with only the given environment. */
export async function dhr(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const root = packageRoot();
  try {
    const { stdout, stderr } = await run(process.execPath, [...cliEntry(root), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Where CLI processes keep the store: a fresh unmigrated server database, or a PGlite directory under `work`. */
export async function cliStore(work: string): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const store = await createProcessStore(work);
  return { env: store.env, drop: () => store.drop() };
}

/** A CLI store in a fresh work folder for a describe block's tests: made before them, dropped after. */
export function useCliStore(prefix: string): { readonly work: string; readonly env: Record<string, string> } {
  const work = mkdtempSync(join(tmpdir(), prefix));
  let env: Record<string, string> | undefined;
  let drop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    ({ env, drop } = await cliStore(work));
  });
  afterAll(async () => {
    await drop?.();
    rmSync(work, { recursive: true, force: true });
  });
  return {
    work,
    get env() {
      if (!env) throw new Error('the CLI store exists only inside tests and hooks');
      return env;
    },
  };
}
