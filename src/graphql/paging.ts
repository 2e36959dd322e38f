import type { Page, PageQuery } from '../store/pages';
import { checkPageSize, decodeCursor, encodeCursor } from './ids';

/**
 * Relay cursor connections paged both ways (https://relay.dev/graphql/connections.htm): the
 * arguments checked and turned into one keyset query, and the page and pageInfo the spec's
 * algorithm gives. Hand-written: graphql-relay's connectionFromArray slices an array in memory;
 * ours reads size + 1 rows of a keyset in the direction asked.
 */
export interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

export interface PagePlan extends PageQuery {
  first?: number;
  last?: number;
}

/** Neither first nor last: the first `defaultFirst`. Bad sizes or cursors: BAD_USER_INPUT naming the argument. */
export function planPage(args: ConnectionArgs, kind: string, maxPageSize: number, defaultFirst: number): PagePlan {
  let first = args.first == null ? undefined : checkPageSize(args.first, maxPageSize, 'first');
  const last = args.last == null ? undefined : checkPageSize(args.last, maxPageSize, 'last');
  const after = decodeCursor(args.after, kind, 'after');
  const before = decodeCursor(args.before, kind, 'before');
  if (first === undefined && last === undefined) first = Math.min(defaultFirst, maxPageSize);
  if (first !== undefined) {
    // Forward (first, or first and last): enough rows to tell whether the window holds more than
    // first and more than last; the edges before `after` are probed when last does not decide.
    return { first, last, after, before, limit: Math.max(first, last ?? 0) + 1, backward: false, probe: after !== undefined && last === undefined };
  }
  return { last, after, before, limit: (last as number) + 1, backward: true, probe: before !== undefined };
}

export interface Connection<R> {
  edges: { cursor: string; node: R }[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
}

/**
 * The page from what the plan read (the window's first or last rows, in key order): the spec's
 * EdgesToReturn, HasNextPage and HasPreviousPage, with its "may return true" cases answered by the probe.
 */
export function connectionOf<R>(plan: PagePlan, read: Page<R>, kind: string, keyOf: (row: R) => number): Connection<R> {
  const { rows, beyond } = read;
  let page = rows;
  let hasNextPage: boolean;
  let hasPreviousPage: boolean;
  if (!plan.backward) {
    const first = plan.first as number;
    page = rows.slice(0, first);
    if (plan.last !== undefined) page = page.slice(page.length - Math.min(plan.last, page.length));
    hasNextPage = rows.length > first;
    hasPreviousPage = plan.last !== undefined ? rows.length > plan.last : beyond;
  } else {
    const last = plan.last as number;
    page = rows.slice(rows.length - Math.min(last, rows.length));
    hasPreviousPage = rows.length > last;
    hasNextPage = beyond;
  }
  const edges = page.map((node) => ({ cursor: encodeCursor(kind, keyOf(node)), node }));
  return {
    edges,
    pageInfo: {
      hasNextPage,
      hasPreviousPage,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges[edges.length - 1]?.cursor ?? null,
    },
  };
}
