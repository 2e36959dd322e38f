import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { packageRoot } from '../../src/paths';
import { cliEntry } from './cli-entry';

export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  /** The URL it printed ("ready at"). */
  url: string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** This process's environment as startServe takes it (benches pass it on whole; tests pass only what they set). */
export function inheritedEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));
}

export interface ServeOptions {
  /** The tree whose src/cli/main.ts runs (default: this package; benches pass an older export). */
  root?: string;
  /** Node's own flags, before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
  /** The port to listen on (default 0: any free one); a fixed one lets a restarted server keep its URL. */
  port?: number;
}

/** A `dhr serve --port 0` process as spawned, before it is ready. */
export type SpawnedServe = Omit<ServeProcess, 'url'> & { stdout(): string };

/** Spawns the real `dhr serve --port 0` (or options.port; the build when current, else TypeScript through tsx: cli-entry.ts) with only the given environment, without waiting for it. */
export function spawnServe(env: Record<string, string>, options: ServeOptions = {}): SpawnedServe {
  const root = options.root ?? packageRoot();
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...cliEntry(root), 'serve', '--port', String(options.port ?? 0)], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ENCODER_THREADS: '1', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Starts the real `dhr serve --port 0` (the build when current, else through tsx) with only the given environment; resolves once it is ready. */
export async function startServe(env: Record<string, string>, timeoutMs = 110_000, options: ServeOptions = {}): Promise<ServeProcess> {
  const { child, stdout, stderr, exited } = spawnServe(env, options);
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`dhr serve not ready; stderr: ${stderr()}`)), timeoutMs);
    child.stdout.on('data', () => {
      const match = /ready at (\S+)/.exec(stdout());
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`dhr serve exited with ${code}: ${stderr()}`));
    });
  });
  return { child, url, stderr, exited };
}
