import DataLoader from 'dataloader';
import { notFound } from '../errors';
import type { Database } from '../store/db';
import { storedSentenceLoader } from '../retrieval/highlight';
import { passagePages, type Page, type PageQuery, type PassageWindow } from '../store/pages';
import * as reads from '../store/reads';
import type { DocumentRow, LinkRow, PassageRow, SectionRow } from '../store/rows';

/** Rows keyed by one column, in the order of the keys DataLoader asks for. */
function byKey<K, R>(keys: readonly K[], rows: R[], keyOf: (row: R) => K): (R | null)[] {
  const map = new Map<K, R>();
  for (const row of rows) map.set(keyOf(row), row);
  return keys.map((k) => map.get(k) ?? null);
}

function groupBy<K, R>(keys: readonly K[], rows: R[], keyOf: (row: R) => K): R[][] {
  const map = new Map<K, R[]>();
  for (const row of rows) {
    const k = keyOf(row);
    const list = map.get(k);
    if (list) list.push(row);
    else map.set(k, [row]);
  }
  return keys.map((k) => map.get(k) ?? []);
}

/** A page of one document's passages: its window and the page's shape (size, direction, probe). */
export type PassagePageKey = PassageWindow & Omit<PageQuery, 'after' | 'before'>;

const pageShape = (k: PassagePageKey): string => `${k.limit}:${k.backward}:${k.probe}`;
const passagePageKey = (k: PassagePageKey): string => `${k.documentId}:${k.after ?? ''}:${k.before ?? ''}:${pageShape(k)}`;

/** One set per request: every nested field batches into one statement per level. */
export function createLoaders(db: Database) {
  return {
    document: new DataLoader<number, DocumentRow | null>(async (ids) => byKey(ids, await reads.documentsByIds(db, ids), (r) => r.id)),
    documentByKey: new DataLoader<string, DocumentRow | null>(async (keys) => byKey(keys, await reads.documentsByKeys(db, keys), (r) => r.key)),
    section: new DataLoader<number, SectionRow | null>(async (ids) => byKey(ids, await reads.sectionsByIds(db, ids), (r) => r.id)),
    tocByDocument: new DataLoader<number, SectionRow[]>(async (ids) => groupBy(ids, await reads.sectionsByDocumentIds(db, ids), (r) => r.documentId)),
    childrenBySection: new DataLoader<number, SectionRow[]>(async (ids) =>
      groupBy(ids, await reads.childrenBySectionIds(db, ids), (r) => r.parentId as number),
    ),
    passage: new DataLoader<number, PassageRow | null>(async (ids) => byKey(ids, await reads.passagesByIds(db, ids), (r) => r.id)),
    passagesBySection: new DataLoader<number, PassageRow[]>(async (ids) =>
      groupBy(ids, await reads.passagesBySectionIds(db, ids), (r) => r.sectionId as number),
    ),
    passageAt: new DataLoader<{ documentId: number; ordinal: number }, PassageRow | null, string>(
      async (keys) =>
        byKey(
          keys.map((k) => `${k.documentId}:${k.ordinal}`),
          await reads.passagesAt(db, keys),
          (r) => `${r.documentId}:${r.ordinal}`,
        ),
      { cacheKeyFn: (k) => `${k.documentId}:${k.ordinal}` },
    ),
    passagePage: new DataLoader<PassagePageKey, Page<PassageRow>, string>(
      async (keys) => {
        // One statement per distinct (size, direction, probe), normally one; pages come back in key order.
        const result = new Map<string, Page<PassageRow>>();
        for (const shape of new Set(keys.map(pageShape))) {
          const group = keys.filter((k) => pageShape(k) === shape);
          const pages = await passagePages(db, group, group[0]);
          group.forEach((k, i) => result.set(passagePageKey(k), pages[i]));
        }
        return keys.map((k) => result.get(passagePageKey(k)) as Page<PassageRow>);
      },
      { cacheKeyFn: passagePageKey },
    ),
    passageCount: new DataLoader<number, number>(async (ids) =>
      byKey(ids, await reads.passageCountsByDocumentIds(db, ids), (r) => r.documentId).map((r) => r?.n ?? 0),
    ),
    outgoingLinks: new DataLoader<number, LinkRow[]>(async (ids) => groupBy(ids, await reads.outgoingLinksByDocumentIds(db, ids), (r) => r.documentId)),
    incomingLinks: new DataLoader<number, LinkRow[]>(async (ids) =>
      groupBy(ids, await reads.incomingLinksByDocumentIds(db, ids), (r) => r.targetDocumentId as number),
    ),
    /** Answer highlights: a retrieval's passages' stored sentence similarities, one statement. */
    sentences: storedSentenceLoader(db),
  };
}

export type Loaders = ReturnType<typeof createLoaders>;

/**
 * A row that another row points at (a passage's document, a link's passage): it is missing only
 * when it was deleted while this request ran, which the caller hears as NOT_FOUND, not as null
 * in a non-null field.
 */
export async function loadReferenced<K, V>(loader: DataLoader<K, V | null>, key: K, what: string): Promise<V> {
  const row = await loader.load(key);
  if (row === null) throw notFound(`${what} ${String(key)} no longer exists (deleted while this request ran)`);
  return row;
}

/**
 * A passage row that carries its document's row (read by the same statement), so
 * `passage { document }` needs no further read. A symbol-keyed property: invisible to JSON, and
 * enumerable, so it survives type-graphql copying a @Root() into its class (Object.assign) where
 * the build emits decorator metadata (tsc, ts-jest; tsx does not).
 */
const PRELOADED_DOCUMENT = Symbol.for('dhr.preloadedDocument');

export function withPreloadedDocument(passage: PassageRow, document: DocumentRow | undefined): PassageRow {
  if (document) (passage as { [PRELOADED_DOCUMENT]?: DocumentRow })[PRELOADED_DOCUMENT] = document;
  return passage;
}

export function preloadedDocument(passage: object): DocumentRow | undefined {
  return (passage as { [PRELOADED_DOCUMENT]?: DocumentRow })[PRELOADED_DOCUMENT];
}
