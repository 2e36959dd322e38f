import { createHash } from 'node:crypto';

export type Split = 'dev' | 'test';

/** Deterministic dev/test split by a hash of the question id: the same question always lands in the same half. */
export function splitOf(id: string): Split {
  return createHash('sha256').update(id).digest()[0] % 2 === 0 ? 'dev' : 'test';
}
