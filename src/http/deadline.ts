export const TIMED_OUT = Symbol('timed out');

/**
 * The request's result, or TIMED_OUT once `ms` have passed (0: no deadline). The work itself is
 * not stopped, but each database statement it runs is bounded by STATEMENT_TIMEOUT_MS.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  if (ms <= 0) return work;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
