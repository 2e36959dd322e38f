import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * The server's structured log: one JSON object per line on stderr (stdout stays for what a
 * command prints for scripts), or on `destination` (tests capture it there). Never given
 * request headers, so keys cannot reach it.
 */
export function createLogger(options: { level?: LogLevel; destination?: DestinationStream } = {}): Logger {
  return pino(
    { level: options.level ?? 'info', base: { service: 'dhr-graphql' }, timestamp: pino.stdTimeFunctions.isoTime },
    options.destination ?? pino.destination({ fd: 2, sync: true }),
  );
}

/** For code that runs outside any server's request (a request id formatted without a scope). */
let fallback: Logger | undefined;
export function defaultLogger(): Logger {
  return (fallback ??= createLogger());
}
