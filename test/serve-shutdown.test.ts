/**
 * `dhr serve`'s shutdown sequence (src/cli/shutdown.ts) on its own, with a stand-in for the
 * process's signals and exit: the order of stopping and closing, a startup step in progress, the
 * second signal, and the forced exit when something never finishes (small grace and margin; the
 * test waits for the exit, it does not time it). test/shutdown.test.ts runs the real process.
 */
import { EventEmitter } from 'node:events';
import { ServeShutdown } from '../src/cli/shutdown';

function harness(graceMs = 10_000, marginMs = 10_000) {
  const events = new EventEmitter();
  const log: string[] = [];
  let exited!: (code: number) => void;
  const exit = new Promise<number>((resolve) => (exited = resolve));
  const codes: number[] = [];
  const shutdown = new ServeShutdown(graceMs, {
    events,
    marginMs,
    log: (m) => log.push(m),
    exit: (code) => {
      codes.push(code);
      exited(code);
    },
  });
  return { shutdown, events, log, exit, codes };
}

describe('serve shutdown sequence', () => {
  it('stops together, then closes last opened first, and exits 0', async () => {
    const { shutdown, events, log, exit } = harness();
    const order: string[] = [];
    await shutdown.open(Promise.resolve('db'), { close: async () => order.push('close db') });
    await shutdown.open(Promise.resolve('models'), { close: async () => order.push('close models') });
    await shutdown.open(Promise.resolve('server'), { stop: async () => order.push('stop server') });
    shutdown.onStop(async () => order.push('stop embedding'));
    events.emit('SIGTERM');
    expect(await exit).toBe(0);
    expect(order).toEqual(['stop server', 'stop embedding', 'close models', 'close db']);
    expect(log[0]).toMatch(/^SIGTERM: shutting down \(in-flight requests get up to 10000 ms; the exit is forced after 20000 ms\)$/);
    expect(log.at(-1)).toBe('stopped');
  });

  it('a signal during a startup step waits for it, closes what it opened, and startup goes no further', async () => {
    const { shutdown, events, exit } = harness();
    const order: string[] = [];
    let opened!: (value: string) => void;
    const opening = shutdown.open(new Promise<string>((resolve) => (opened = resolve)), { close: async (v) => order.push(`close ${v}`) });
    let startupWentOn = false;
    void opening.then(() => (startupWentOn = true));
    events.emit('SIGTERM');
    opened('db');
    expect(await exit).toBe(0);
    expect(order).toEqual(['close db']);
    expect(startupWentOn).toBe(false);
  });

  it('a step that fails is logged; the others still run; exit 1', async () => {
    const { shutdown, events, log, exit } = harness();
    const order: string[] = [];
    await shutdown.open(Promise.resolve('db'), { close: async () => order.push('close db') });
    await shutdown.open(Promise.resolve('models'), { close: () => Promise.reject(new Error('models would not close')) });
    events.emit('SIGINT');
    expect(await exit).toBe(1);
    expect(order).toEqual(['close db']);
    expect(log).toContain('shutdown: models would not close');
  });

  it('a second signal exits 1 at once while the first shutdown waits', async () => {
    const { shutdown, events, log, exit } = harness();
    shutdown.onStop(() => new Promise(() => undefined));
    events.emit('SIGTERM');
    events.emit('SIGTERM');
    expect(await exit).toBe(1);
    expect(log).toContain('SIGTERM again: exiting without waiting');
  });

  it('past the grace period and the margin, the exit is forced with code 1 even though a step never finishes', async () => {
    const { shutdown, events, log, exit } = harness(20, 20);
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      shutdown.onStop(() => new Promise(() => undefined));
      events.emit('SIGTERM');
      expect(await exit).toBe(1);
      expect(log).toContain('shutdown: not done after 40 ms (SHUTDOWN_GRACE_MS + 20 ms): exiting with work unfinished');
    } finally {
      clearInterval(keepAlive);
    }
  });
});
