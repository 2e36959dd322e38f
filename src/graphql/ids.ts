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
