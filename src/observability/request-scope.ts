import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { defaultLogger, type Logger } from './logger';

/**
 * What is known about the HTTP request being served, for whatever runs on its behalf: its id
 * (x-request-id, extensions.requestId of internal errors), the server's logger, and what the
 * GraphQL layer learned (operation, outcome) for the request's log line.
 */
export interface RequestScope {
  readonly id: string;
  readonly log: Logger;
  /** The operation's root fields ("retrieve", "documents+stats"), once resolved. */
  operation?: string;
  /** query | mutation | subscription. */
  type?: string;
  /** "ok" or the first error's extensions.code. */
  outcome?: string;
}

const scopes = new AsyncLocalStorage<RequestScope>();

export function newRequestId(): string {
  return randomUUID();
}

export function runInRequest<T>(scope: RequestScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

export function currentRequest(): RequestScope | undefined {
  return scopes.getStore();
}

/** The logger of the current request's server, or the process's default one. */
export function currentLogger(): Logger {
  return scopes.getStore()?.log ?? defaultLogger();
}
