import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { main } from '../src/cli/main';
import { buildProgram, urlFormOf } from '../src/cli/program';
import { asksServedStore } from '../src/cli/transport';
import { packageRoot } from '../src/paths';
import { cliEntry } from './helpers/cli-entry';

/** Every command path: ['serve'], ['models', 'activate'], … */
function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

const paths = commandPaths(buildProgram(async () => undefined));
/** `keys create`, not `dhr keys create`. */
const commandPath = (command: Command): string => (command.parent?.parent ? `${commandPath(command.parent)} ${command.name()}` : command.name());

/** Runs main in-process, capturing what it writes. */
async function capture(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  const log = jest.spyOn(console, 'error').mockImplementation((...args) => void (err += `${args.join(' ')}\n`));
  try {
    return { code: await main(argv), out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    log.mockRestore();
  }
}

describe('dhr --help', () => {
  it('knows every command', () => {
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'serve',
        'migrate',
        'ingest',
        'embed',
        'stats',
        'models register',
        'models activate',
        'reembed',
        'worker',
        'jobs cancel',
        'keys create',
        'eval',
        'ask',
      ]),
    );
  });

  it.each(paths.map((p) => [p.join(' '), p]))('dhr %s --help prints its usage and exits 0', async (_, path) => {
    // Settings that would fail to load: --help must not read them (nor open a database).
    process.env.PORT = 'not a port';
    try {
      const { code, out, err } = await capture([...path, '--help']);
      expect(err).toBe('');
      expect(code).toBe(0);
      expect(out).toContain(`Usage: dhr ${path.join(' ')}`);
    } finally {
      delete process.env.PORT;
    }
  });

  it('names the --url form of every command that has one when a server holds the store', () => {
    const sent = (command: Command): Command[] => command.commands.flatMap((c) => [...(c.options.some((o) => o.long === '--url') ? [c] : []), ...sent(c)]);
    const refused = sent(buildProgram(async () => undefined)).filter((c) => !asksServedStore(commandPath(c)));
    expect(refused.map(commandPath)).toEqual(expect.arrayContaining(['ingest', 'settings set', 'jobs cancel']));
    expect(refused.filter((c) => urlFormOf(c) === undefined).map(commandPath)).toEqual([]);
  });

  it('dhr --help lists the commands and the environment', async () => {
    const { code, out } = await capture(['--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/Commands:[\s\S]*ingest[\s\S]*eval/);
    expect(out).toContain('DATABASE_URL');
  });

  it('refuses an unknown option with exit code 1 and a hint', async () => {
    const { code, err } = await capture(['eval', '--dataset', 'pydocs', '--frobnicate']);
    expect(code).toBe(1);
    expect(err).toMatch(/unknown option '--frobnicate'/);
    expect(err).toMatch(/dhr <command> --help/);
  });

  it('works as the installed bin, through the build shim (bin/dhr.js)', async () => {
    const root = packageRoot();
    const { stdout } = await promisify(execFile)(process.execPath, [join(root, 'bin/dhr.js'), 'ingest', '--help'], {
      cwd: root,
      timeout: 120_000,
    });
    expect(stdout).toContain('Usage: dhr ingest [options] [paths...]');
  });

  it('loads neither PGlite, onnxruntime nor the GraphQL server for --help (command modules load when their command runs)', async () => {
    const root = packageRoot();
    const entry = cliEntry(root);
    const script = `require(${JSON.stringify(entry[entry.length - 1])}).main(['--help']).then(() => {
      const heavy = Object.keys(require.cache).filter((f) => /node_modules\\/(onnxruntime-node|@electric-sql\\/pglite|type-graphql|@apollo\\/server|@prisma\\/client)\\//.test(f));
      process.stderr.write(JSON.stringify(heavy));
    })`;
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...entry.slice(0, -1), '-e', script], { cwd: root, timeout: 120_000 });
    expect(stdout).toContain('Usage: dhr');
    expect(JSON.parse(stderr)).toEqual([]);
  });

  it('ends quietly when the reader of its output leaves (dhr --help | head -1)', async () => {
    const root = packageRoot();
    const { stdout, stderr } = await promisify(execFile)('bash', ['-c', `set -o pipefail; ${JSON.stringify(process.execPath)} bin/dhr.js --help | head -1`], {
      cwd: root,
      timeout: 120_000,
    });
    expect(stdout).toBe('Usage: dhr [options] [command]\n');
    expect(stderr).not.toMatch(/EPIPE|Error/);
  });
});
