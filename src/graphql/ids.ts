import { badUserInput } from '../errors';

/** Ids and the values inside cursors (ids, ordinals) are int4 columns, never negative. */
const INT4_MAX = 2_147_483_647;

/** Our ids are positive integers; GraphQL carries them as ID strings. */
export function parseId(value: string | number, argument: string): number {
  const text = String(value);
  if (!/^[1-9]\d{0,9}$/.test(text) || Number(text) > INT4_MAX) {
    throw badUserInput(`${argument} must be a positive integer id, got "${text.slice(0, 40)}"`, argument);
  }
  return Number(text);
}

/** The object types that implement Node: their `id` is a global id, `databaseId` the integer. */
export const NODE_TYPES = ['Document', 'Section', 'Passage'] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/**
 * Relay global ids: base64url of "<Type>:<databaseId>" (GitHub's and graphql-relay's scheme, with
 * the URL-safe alphabet so ids go into console URLs as they are). Hand-written: graphql-relay's
 * toGlobalId uses standard base64 and checks nothing on decoding.
 */
export function toGlobalId(type: NodeType, id: number): string {
  return Buffer.from(`${type}:${id}`, 'utf8').toString('base64url');
}

/** The type and database id inside a global id, or undefined when it is not one of ours. */
function decodeGlobalId(value: string): { type: NodeType; id: number } | undefined {
  // Buffer decoding skips characters outside the alphabet: only a canonical encoding counts.
  const text = Buffer.from(value, 'base64url').toString('utf8');
  const match = /^([A-Za-z]+):([1-9]\d{0,9})$/.exec(text);
  if (!match || Buffer.from(text, 'utf8').toString('base64url') !== value) return undefined;
  const type = NODE_TYPES.find((t) => t === match[1]);
  if (!type || Number(match[2]) > INT4_MAX) return undefined;
  return { type, id: Number(match[2]) };
}

/** A global id of any node type (node, nodes): a plain integer says no type, so it is refused. */
export function parseGlobalId(value: string | number, argument: string): { type: NodeType; id: number } {
  const text = String(value);
  const decoded = decodeGlobalId(text);
  if (!decoded) throw badUserInput(`${argument} must be a global id (a node's id field), got "${text.slice(0, 40)}"`, argument);
  return decoded;
}

/**
 * An id argument of a known type: its global id, or (as before global ids) the plain integer
 * databaseId, so clients written against integer ids keep working. A global id of another type
 * is refused, naming both types.
 */
export function parseNodeId(value: string | number, type: NodeType, argument: string): number {
  const text = String(value);
  if (/^\d+$/.test(text)) return parseId(text, argument);
  const decoded = decodeGlobalId(text);
  if (!decoded) {
    throw badUserInput(`${argument} must be a ${type} id (global, or its integer databaseId), got "${text.slice(0, 40)}"`, argument);
  }
  if (decoded.type !== type) throw badUserInput(`${argument} is a ${decoded.type} id where a ${type} id is expected`, argument);
  return decoded.id;
}

/** Opaque Relay cursors: base64 of "<kind>:<integer>". */
export function encodeCursor(kind: string, value: number): string {
  return Buffer.from(`${kind}:${value}`, 'utf8').toString('base64url');
}

/** The value inside a cursor this connection made; anything else (another kind, out of int4 range) is BAD_USER_INPUT. */
export function decodeCursor(cursor: string | null | undefined, kind: string, argument = 'after'): number | undefined {
  if (cursor === null || cursor === undefined) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const match = new RegExp(`^${kind}:(0|[1-9]\\d{0,9})$`).exec(text);
  if (!match || Number(match[1]) > INT4_MAX) throw badUserInput(`${argument} is not a valid cursor for this connection`, argument);
  return Number(match[1]);
}

export function checkPageSize(first: number, max: number, argument = 'first'): number {
  if (!Number.isInteger(first) || first < 0 || first > max) {
    throw badUserInput(`${argument} must be an integer from 0 to ${max}, got ${first}`, argument);
  }
  return first;
}
