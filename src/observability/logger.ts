import pino, { type DestinationStream, type Logger } from 'pino';
import { humanDestination, resolveLogFormat, stderrDestination, type LogFormat } from './human-log';

export type { Logger };
export { LOG_FORMATS, type LogFormat } from './human-log';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface LoggerOptions {
  level?: LogLevel;
  /** Where the lines go: stderr by default (stdout stays for what a command prints for scripts); tests capture them here. */
  destination?: DestinationStream;
  /** LOG_FORMAT; auto (the default) decides by whether stderr is a terminal (a given destination is not). */
  format?: LogFormat;
}

const humanLoggers = new WeakSet<Logger>();

/**
 * The server's log: one JSON object per line (pino), or on a person's terminal one human line per
 * entry (human-log.ts). Never given request headers, so keys cannot reach it.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const tty = options.destination === undefined && process.stderr.isTTY === true;
  const format = resolveLogFormat(options.format ?? 'auto', tty);
  const target = options.destination ?? stderrDestination();
  const logger = pino(
    { level: options.level ?? 'info', base: { service: 'dhr-graphql' }, timestamp: pino.stdTimeFunctions.isoTime },
    format === 'pretty' ? humanDestination(target, tty) : target,
  );
  if (format === 'pretty') humanLoggers.add(logger);
  return logger;
}

/** Whether a person reads this logger's lines: its routine request lines then go at debug, so a terminal is not flooded. */
export const writesForPeople = (logger: Logger): boolean => humanLoggers.has(logger);

/** For code that runs outside any server's request (a request id formatted without a scope). */
let fallback: Logger | undefined;
export function defaultLogger(): Logger {
  return (fallback ??= createLogger());
}
