import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config';
import { humanLine, resolveLogFormat } from '../src/observability/human-log';
import { packageRoot } from '../src/paths';
import { startServer } from '../src/server';
import { createTestDatabase, type TestDatabase } from './helpers/database';

/**
 * The log a person reads: LOG_FORMAT and NODE_ENV decide, auto follows whether stderr is a
 * terminal (a real pseudo-terminal from util-linux's script(1)), and on a terminal answered
 * requests go at debug so they do not flood the demo's progress.
 */

describe('which log format', () => {
  it('auto is human on a terminal, JSON elsewhere and under NODE_ENV=production; LOG_FORMAT says otherwise', () => {
    const cases: [Record<string, string>, boolean, 'json' | 'pretty'][] = [
      [{}, true, 'pretty'],
      [{}, false, 'json'],
      [{ NODE_ENV: 'production' }, true, 'json'],
      [{ LOG_FORMAT: 'json' }, true, 'json'],
      [{ LOG_FORMAT: 'pretty' }, false, 'pretty'],
      [{ LOG_FORMAT: 'pretty', NODE_ENV: 'production' }, false, 'pretty'],
      [{ LOG_FORMAT: 'auto', NODE_ENV: 'production' }, true, 'json'],
    ];
    for (const [env, tty, want] of cases) expect([env, tty, resolveLogFormat(loadConfig(env).logFormat, tty)]).toEqual([env, tty, want]);
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(ConfigError);
    expect(() => loadConfig({ LOG_FORMAT: 'yaml' })).toThrow(/LOG_FORMAT/);
  });

  it('writes human lines on a real terminal and JSON into a pipe', () => {
    const work = mkdtempSync(join(tmpdir(), 'dhr-tty-'));
    try {
      const script = join(work, 'log.ts');
      writeFileSync(
        script,
        `import { loadConfig } from ${JSON.stringify(join(packageRoot(), 'src/config'))};
         import { createLogger } from ${JSON.stringify(join(packageRoot(), 'src/observability/logger'))};
         createLogger({ format: loadConfig().logFormat }).warn({ jobs: 2 }, 'queue is long');`,
      );
      const node = `${JSON.stringify(process.execPath)} --import tsx ${JSON.stringify(script)}`;
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'LOG_FORMAT' && k !== 'NODE_ENV'));
      const onTerminal = execFileSync('script', ['-qec', node, '/dev/null'], { cwd: packageRoot(), env, encoding: 'utf8' });
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC (\u001b) starts the ANSI colour codes stripped here
      expect(onTerminal.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}queue is long jobs=2\r?\n$/);
      const piped = execFileSync('bash', ['-c', `${node} 2>&1 | cat`], { cwd: packageRoot(), env, encoding: 'utf8' });
      expect(JSON.parse(piped)).toMatchObject({ level: 40, msg: 'queue is long', jobs: 2 });
      const production = execFileSync('script', ['-qec', node, '/dev/null'], { cwd: packageRoot(), env: { ...env, NODE_ENV: 'production' }, encoding: 'utf8' });
      expect(JSON.parse(production)).toMatchObject({ level: 40, msg: 'queue is long' });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('human lines', () => {
  it('a request as method, path, status, duration, operation, outcome and its id', () => {
    const line = JSON.stringify({
      level: 30,
      time: '2026-12-01T21:40:07.412Z',
      service: 'dhr-graphql',
      requestId: 'be59c2d1-0000',
      method: 'POST',
      path: '/',
      status: 400,
      durationMs: 3.1,
      operationName: 'Ask',
      operation: 'retrieve',
      type: 'query',
      outcome: 'BAD_USER_INPUT',
      msg: 'request',
    });
    expect(humanLine(line, false)).toBe('21:40:07.412 INFO  POST / 400 3.1 ms Ask query BAD_USER_INPUT [be59c2d1]\n');
  });

  it('an error with its stack under it, and any other fields as key=value', () => {
    const line = JSON.stringify({
      level: 50,
      time: '2026-12-01T21:40:09.020Z',
      service: 'dhr-graphql',
      requestId: 'r1',
      err: { message: 'boom', stack: 'Error: boom\n    at x' },
      msg: 'internal error',
    });
    expect(humanLine(line, false)).toBe('21:40:09.020 ERROR internal error requestId=r1\nError: boom\n    at x\n');
  });
});

describe('the request log on a terminal', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase();
  });
  afterAll(() => t?.drop());

  async function requestLines(env: Record<string, string>): Promise<string> {
    const written: string[] = [];
    const { url, stop } = await startServer(t.db, loadConfig({ PORT: '0', ...env }), undefined, {
      logDestination: { write: (s: string) => void written.push(s) },
    });
    try {
      const post = (query: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      expect((await post('query Stats { stats { documents } }')).status).toBe(200);
      expect((await post('query Broken { stats { nope } }')).status).toBe(400);
    } finally {
      await stop();
    }
    return written.join('');
  }

  it('logs failed requests only at info, every request at debug, one human line each', async () => {
    const info = await requestLines({ LOG_FORMAT: 'pretty' });
    expect(info).not.toContain('Stats');
    expect(info).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  POST \/ 400 [\d.]+ ms (Broken )?GRAPHQL_VALIDATION_FAILED \[[0-9a-f]{8}\]$/m);
    const debug = await requestLines({ LOG_FORMAT: 'pretty', LOG_LEVEL: 'debug' });
    expect(debug).toMatch(/^\d\d:\d\d:\d\d\.\d{3} DEBUG POST \/ 200 [\d.]+ ms Stats query ok \[[0-9a-f]{8}\]$/m);
    // JSON for a log collector: every request at info, as before.
    const json = (await requestLines({ LOG_FORMAT: 'json' }))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(json.filter((l) => l.msg === 'request').map((l) => [l.level, l.status])).toEqual([
      [30, 200],
      [30, 400],
    ]);
  });
});
