import { resolve } from 'node:path';
import { DEFAULT_INGEST_OPTIONS, type IngestOptions } from './ingest/types';

/** Settings from the environment; every one has a default so the embedded demo needs none. */
export interface Config {
  /** PostgreSQL server URL; absent → embedded PGlite in dataDir. */
  databaseUrl?: string;
  dataDir: string;
  port: number;
  host: string;
  ingest: IngestOptions;
  /** Most documents one ingestDocuments mutation may carry. */
  maxIngestBatch: number;
  /** Largest page a connection returns. */
  maxPageSize: number;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: resolve(env.DATA_DIR || './data'),
    port: intSetting(env, 'PORT', 4000, 0, 65535),
    host: env.HOST || '127.0.0.1',
    ingest: {
      maxWords: intSetting(env, 'MAX_WORDS', DEFAULT_INGEST_OPTIONS.maxWords, 1, 10_000),
      maxDocumentBytes: intSetting(env, 'MAX_DOCUMENT_BYTES', DEFAULT_INGEST_OPTIONS.maxDocumentBytes, 1, 1 << 30),
    },
    maxIngestBatch: intSetting(env, 'MAX_INGEST_BATCH', 1000, 1, 100_000),
    maxPageSize: intSetting(env, 'MAX_PAGE_SIZE', 100, 1, 10_000),
  };
}

function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}
