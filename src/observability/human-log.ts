import { styleText } from 'node:util';
import pino, { type DestinationStream } from 'pino';

/**
 * The log as a person reads it on a terminal: one line per entry, time, level, message, then the
 * fields; a request as `METHOD path status duration operation outcome`. Entries arrive as the
 * JSON lines pino writes, so the structured log and this one carry the same facts.
 */

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * auto: human lines when the log's output is a terminal, JSON when it is not (a file, a pipe, a
 * log collector); json and pretty say so whatever the output. (NODE_ENV=production makes auto
 * json in config.ts.)
 */
export function resolveLogFormat(format: LogFormat, tty: boolean): 'json' | 'pretty' {
  return format === 'auto' ? (tty ? 'pretty' : 'json') : format;
}

const LEVELS: Record<number, { name: string; style?: Parameters<typeof styleText>[0] }> = {
  10: { name: 'TRACE', style: 'gray' },
  20: { name: 'DEBUG', style: 'gray' },
  30: { name: 'INFO ', style: 'green' },
  40: { name: 'WARN ', style: 'yellow' },
  50: { name: 'ERROR', style: 'red' },
  60: { name: 'FATAL', style: ['bgRed', 'white'] },
};

// What every line has or the line's own layout shows.
const SHOWN = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname', 'err']);
const REQUEST = new Set(['method', 'path', 'status', 'durationMs', 'operationName', 'operation', 'type', 'outcome', 'requestId']);

const value = (v: unknown) => (typeof v === 'string' ? (/\s/.test(v) || v === '' ? JSON.stringify(v) : v) : JSON.stringify(v));

/** One JSON log line as one human line (an error's stack on the lines after it). */
export function humanLine(json: string, color: boolean): string {
  let e: Record<string, unknown>;
  try {
    e = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const paint = (style: Parameters<typeof styleText>[0] | undefined, text: string) => (color && style ? styleText(style, text) : text);
  const level = LEVELS[e.level as number] ?? { name: String(e.level) };
  const time = typeof e.time === 'string' ? e.time.slice(11, 23) : new Date(Number(e.time)).toISOString().slice(11, 23);
  const isRequest = e.msg === 'request' && typeof e.method === 'string';
  const parts = [paint('gray', time), paint(level.style, level.name)];
  if (isRequest) {
    const status = Number(e.status);
    parts.push(`${e.method} ${e.path} ${paint(status >= 500 ? 'red' : status >= 400 ? 'yellow' : undefined, String(status))} ${e.durationMs} ms`);
    // A request refused before its operation was resolved says 'unknown': nothing to read there.
    const op = [e.operationName ?? e.operation, e.type, e.outcome].filter((x) => x !== undefined && x !== 'unknown').join(' ');
    if (op) parts.push(op);
    parts.push(paint('gray', `[${String(e.requestId).slice(0, 8)}]`));
  } else {
    parts.push(String(e.msg ?? ''));
  }
  const skip = isRequest ? REQUEST : new Set<string>();
  const fields = Object.entries(e).filter(([k]) => !SHOWN.has(k) && !skip.has(k));
  if (fields.length > 0) parts.push(paint('gray', fields.map(([k, v]) => `${k}=${value(v)}`).join(' ')));
  let line = parts.join(' ');
  const err = e.err as { message?: string; stack?: string } | undefined;
  if (err) line += `\n${paint('red', err.stack ?? err.message ?? JSON.stringify(err))}`;
  return `${line}\n`;
}

/** A pino destination that writes each entry to `target` as a human line. */
export function humanDestination(target: { write(text: string): unknown }, color: boolean): DestinationStream {
  return { write: (line: string) => void target.write(humanLine(line, color)) };
}

/** stderr, written synchronously, so a line is out before the process exits or a progress bar redraws. */
export const stderrDestination = (): DestinationStream => pino.destination({ fd: 2, sync: true });
