import { createHash, randomBytes } from 'node:crypto';
import { DomainError, ErrorCode } from '../errors';
import type { Queryable } from './db';
import { isStorageFault } from './faults';

/** admin: every operation; reader: queries only (and only matters when READ_ACCESS=key). */
export type Role = 'admin' | 'reader';
export const ROLES: readonly Role[] = ['admin', 'reader'];

/** Who a request acts as, once its key is checked. Never carries the key itself. */
export interface Principal {
  keyId: number;
  role: Role;
  name: string;
}

export interface CreatedApiKey extends Principal {
  id: number;
  /** The plaintext key: shown once, never stored. */
  key: string;
  prefix: string;
}

export interface ApiKeyListing {
  id: number;
  name: string;
  role: Role;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A key request refused (bad role, empty name, ambiguous prefix). */
export class ApiKeyError extends DomainError {
  constructor(message: string) {
    super(ErrorCode.BAD_USER_INPUT, message);
    this.name = 'ApiKeyError';
  }
}

const KEY_PREFIX = 'dhr_';
/** `dhr_` + base64url of 32 bytes (43 characters). */
const KEY_FORMAT = /^dhr_[A-Za-z0-9_-]{43}$/;
/** Enough of the key to tell keys apart in a listing, far too little to guess the rest. */
const SHOWN_CHARS = KEY_PREFIX.length + 6;
/** last_used_at is a hint for people, not an audit log: refresh it at most this often per key. */
const LAST_USED_RESOLUTION_S = 60;

/** SHA-256 hex: the key is 256 random bits, so a fast hash is safe and keeps lookups one index probe. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

export async function createApiKey(db: Queryable, options: { role: Role; name: string }): Promise<CreatedApiKey> {
  if (!isRole(options.role)) throw new ApiKeyError(`role must be one of ${ROLES.join(', ')}, got "${options.role}"`);
  const name = options.name.trim();
  if (!name) throw new ApiKeyError('a key needs a non-empty name');
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  const prefix = key.slice(0, SHOWN_CHARS);
  const [row] = await db.query<{ id: number }>('INSERT INTO api_keys (name, role, key_hash, key_prefix) VALUES ($1, $2, $3, $4) RETURNING id', [
    name,
    options.role,
    hashApiKey(key),
    prefix,
  ]);
  return { id: row.id, keyId: row.id, key, prefix, role: options.role, name };
}

/**
 * The principal for a key, or undefined when it is malformed, unknown or revoked. One indexed
 * SELECT per request; last_used_at is written only when it is over a minute old, so a busy
 * client does not turn every read into a row update (and a new row version).
 */
export async function authenticateKey(db: Queryable, key: string): Promise<Principal | undefined> {
  if (!KEY_FORMAT.test(key)) return undefined;
  const [row] = await db.query<{ id: number; role: Role; name: string; stale: boolean }>(
    `SELECT id, role, name,
            (last_used_at IS NULL OR last_used_at < now() - interval '${LAST_USED_RESOLUTION_S} seconds') AS stale
     FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
    [hashApiKey(key)],
  );
  if (!row) return undefined;
  // Bookkeeping only: a store refusing writes (read-only, full) must not refuse the reads it still serves.
  if (row.stale)
    await db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [row.id]).catch((error: unknown) => {
      if (!isStorageFault(error)) throw error;
    });
  return { keyId: row.id, role: row.role, name: row.name };
}

/** Every key, revoked ones included, oldest first; never the hash. */
export async function listApiKeys(db: Queryable): Promise<ApiKeyListing[]> {
  const rows = await db.query<{
    id: number;
    name: string;
    role: Role;
    prefix: string;
    created_at: Date | string;
    last_used_at: Date | string | null;
    revoked_at: Date | string | null;
  }>(
    `SELECT id, name, role, key_prefix AS prefix, created_at, last_used_at, revoked_at
     FROM api_keys ORDER BY id`,
  );
  const date = (d: Date | string | null) => (d === null ? null : new Date(d));
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    role: r.role,
    prefix: r.prefix,
    createdAt: new Date(r.created_at),
    lastUsedAt: date(r.last_used_at),
    revokedAt: date(r.revoked_at),
  }));
}

/**
 * Revokes one key by id or by its shown prefix (which must match exactly one key). Returns the
 * revoked key, or undefined when nothing matched; revoking twice keeps the first revocation time.
 */
export async function revokeApiKey(db: Queryable, idOrPrefix: string): Promise<ApiKeyListing | undefined> {
  const byId = /^\d+$/.test(idOrPrefix);
  const matches = (await listApiKeys(db)).filter((k) => (byId ? k.id === Number(idOrPrefix) : k.prefix.startsWith(idOrPrefix)));
  if (matches.length > 1) {
    throw new ApiKeyError(`"${idOrPrefix}" matches ${matches.length} keys (${matches.map((k) => k.id).join(', ')}); give the id`);
  }
  if (matches.length === 0) return undefined;
  await db.query('UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1', [matches[0].id]);
  return (await listApiKeys(db)).find((k) => k.id === matches[0].id);
}

/** Whether any key can run admin mutations (the server says how to make one when none can). */
export async function hasAdminKey(db: Queryable): Promise<boolean> {
  const rows = await db.query("SELECT 1 FROM api_keys WHERE role = 'admin' AND revoked_at IS NULL LIMIT 1");
  return rows.length > 0;
}
