import { Kind, parse, type OperationDefinitionNode } from 'graphql';
import { measureOperation } from '../src/graphql/armor';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { createTestApi, dataOf, type TestApi } from './helpers/api';

/**
 * Relay compliance (https://relay.dev/graphql/connections.htm, https://relay.dev/graphql/objectidentification.htm):
 * both connections paged both ways against the spec's algorithm run here over the list read from
 * the store, global ids round-tripping through node/nodes, and the old integer ids still accepted.
 */

const MAX_PAGE = 6;
const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;
const PAGE_FIELDS = 'edges { cursor node { databaseId } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor }';

interface Args {
  first?: number;
  last?: number;
  /** Index into the full list whose cursor is the bound. */
  after?: number;
  before?: number;
}

interface Expected {
  ids: number[];
  hasNextPage: boolean;
  hasPreviousPage: boolean;
}

/**
 * The spec's EdgesToReturn / HasPreviousPage / HasNextPage over the whole list, with its optional
 * cases ("may return true if edges exist prior to after / further from before") answered truthfully,
 * as the API does: anything outside the window on the cursor's side counts.
 */
function specPage(all: number[], args: Args): Expected {
  const lo = args.after === undefined ? -1 : args.after;
  const hi = args.before === undefined ? all.length : args.before;
  const window = all.slice(lo + 1, Math.max(lo + 1, hi));
  const first = args.first === undefined && args.last === undefined ? MAX_PAGE : args.first;
  let edges = window;
  if (first !== undefined) edges = edges.slice(0, first);
  if (args.last !== undefined) edges = edges.slice(edges.length - Math.min(args.last, edges.length));
  const hasPreviousPage = args.last !== undefined ? window.length > args.last : args.after !== undefined && lo >= 0;
  const hasNextPage = first !== undefined ? window.length > first : args.before !== undefined && hi < all.length;
  return { ids: edges, hasNextPage, hasPreviousPage };
}

function argText(args: Args, cursors: string[]): string {
  const parts: string[] = [];
  if (args.first !== undefined) parts.push(`first: ${args.first}`);
  if (args.last !== undefined) parts.push(`last: ${args.last}`);
  if (args.after !== undefined) parts.push(`after: "${cursors[args.after]}"`);
  if (args.before !== undefined) parts.push(`before: "${cursors[args.before]}"`);
  return parts.join(', ');
}

function actual(connection: any): Expected & { startCursor: string | null; endCursor: string | null; cursors: string[] } {
  const edges = connection.edges as { cursor: string; node: { databaseId: number } }[];
  return {
    ids: edges.map((e) => e.node.databaseId),
    cursors: edges.map((e) => e.cursor),
    hasNextPage: connection.pageInfo.hasNextPage,
    hasPreviousPage: connection.pageInfo.hasPreviousPage,
    startCursor: connection.pageInfo.startCursor,
    endCursor: connection.pageInfo.endCursor,
  };
}

/** Every combination of sizes and bounds (cursors at both ends and inside) on a list of n. */
function windowCases(n: number): Args[] {
  const bounds = [undefined, 0, 1, Math.floor(n / 2), n - 2, n - 1];
  const sizes: [number | undefined, number | undefined][] = [];
  for (const first of [undefined, 0, 1, 2, 4, MAX_PAGE]) for (const last of [undefined, 0, 1, 3]) sizes.push([first, last]);
  const cases: Args[] = [];
  for (const after of bounds) {
    for (const before of bounds) {
      for (const [first, last] of sizes) cases.push({ first, last, after, before });
    }
  }
  return cases;
}

const COUNT = 9;
function corpus() {
  const docs = Array.from({ length: COUNT }, (_, i) => ({
    key: `doc-${i}`,
    title: `Document ${i}`,
    source: i % 3 === 0 ? 'thirds' : 'rest',
    abstract: `Abstract of document ${i}.`,
    sections: [{ title: 'Only', text: `The one section of document ${i}.` }],
  }));
  // A long document: its abstract and 10 sections are 11 passages in reading order.
  docs.push({
    key: 'long',
    title: 'Long',
    source: 'long',
    abstract: 'The long abstract.',
    sections: Array.from({ length: 10 }, (_, s) => ({ title: `Part ${s}`, text: `Part ${s} of the long document.` })),
  });
  return docs;
}

describe('Relay: global ids, node/nodes and connections both ways', () => {
  let api: TestApi;
  /** The store's documents in id order and the long document's passages in reading order: the brute force. */
  let documentIds: number[];
  let passageIds: number[];
  let longId: number;

  beforeAll(async () => {
    api = await createTestApi({ MAX_PAGE_SIZE: String(MAX_PAGE), MAX_ALIASES: '1000', MAX_QUERY_TOKENS: '1000000' });
    expect(dataOf(await api.exec(INGEST, { docs: corpus() })).ingestDocuments).toEqual({ created: COUNT + 1, failed: 0 });
    documentIds = (await api.testDb.db.query<{ id: number }>('SELECT id FROM documents ORDER BY id')).map((r) => r.id);
    longId = (await api.testDb.db.query<{ id: number }>(`SELECT id FROM documents WHERE key = 'long'`))[0].id;
    passageIds = (await api.testDb.db.query<{ id: number }>('SELECT id FROM passages WHERE document_id = $1 ORDER BY ordinal', [longId])).map((r) => r.id);
    expect(passageIds).toHaveLength(11);
  }, 300_000);
  afterAll(() => api.close());

  /** One connection's field, given its arguments, as the query text (documents or the long document's passages). */
  type Field = (args: string) => string;
  const documentsField: Field = (args) => `documents${args ? `(${args})` : ''} { ${PAGE_FIELDS} }`;
  const passagesField: Field = (args) => `passages${args ? `(${args})` : ''} { ${PAGE_FIELDS} }`;

  async function page(conn: 'documents' | 'passages', args: string): Promise<ReturnType<typeof actual>> {
    if (conn === 'documents') return actual(dataOf(await api.exec(`{ ${documentsField(args)} }`)).documents);
    return actual(dataOf(await api.exec(`{ document(key: "long") { ${passagesField(args)} } }`)).document.passages);
  }

  /** Each connection's cursors in list order: read by walking forward a page at a time. */
  async function allCursors(conn: 'documents' | 'passages'): Promise<string[]> {
    const cursors: string[] = [];
    let after: string | null = null;
    for (;;) {
      const p: ReturnType<typeof actual> = await page(conn, `first: 4${after ? `, after: "${after}"` : ''}`);
      cursors.push(...p.cursors);
      if (!p.hasNextPage) return cursors;
      after = p.endCursor;
    }
  }

  const lists = () => ({ documents: documentIds, passages: passageIds });

  describe.each(['documents', 'passages'] as const)('%s connection', (conn) => {
    it('forward pages (first/after) walk the whole list exactly once, with pageInfo at both ends', async () => {
      const all = lists()[conn];
      for (const size of [1, 3, MAX_PAGE]) {
        const seen: number[] = [];
        let after: string | null = null;
        let pages = 0;
        for (;;) {
          const p: ReturnType<typeof actual> = await page(conn, `first: ${size}${after ? `, after: "${after}"` : ''}`);
          expect(p.ids).toEqual(all.slice(seen.length, seen.length + size));
          expect(p.hasPreviousPage).toBe(pages > 0);
          expect(p.startCursor).toBe(p.cursors[0] ?? null);
          expect(p.endCursor).toBe(p.cursors[p.cursors.length - 1] ?? null);
          seen.push(...p.ids);
          pages += 1;
          if (!p.hasNextPage) break;
          after = p.endCursor;
        }
        expect(seen).toEqual(all);
        expect(pages).toBe(Math.ceil(all.length / size));
      }
    });

    it('backward pages (last/before) walk the whole list exactly once, with pageInfo at both ends', async () => {
      const all = lists()[conn];
      for (const size of [1, 4, MAX_PAGE]) {
        const seen: number[] = [];
        let before: string | null = null;
        let pages = 0;
        for (;;) {
          const p: ReturnType<typeof actual> = await page(conn, `last: ${size}${before ? `, before: "${before}"` : ''}`);
          expect(p.ids).toEqual(all.slice(Math.max(0, all.length - seen.length - size), all.length - seen.length));
          expect(p.hasNextPage).toBe(pages > 0);
          seen.unshift(...p.ids);
          pages += 1;
          if (!p.hasPreviousPage) break;
          before = p.startCursor;
        }
        expect(seen).toEqual(all);
        expect(pages).toBe(Math.ceil(all.length / size));
      }
    });

    it('every first/last/after/before window matches the spec algorithm over the stored list', async () => {
      const all = lists()[conn];
      const cursors = await allCursors(conn);
      expect(cursors).toHaveLength(all.length);
      const cases = windowCases(all.length);
      // Many windows per request (aliases): each is its own field, so its own statement.
      for (let i = 0; i < cases.length; i += 60) {
        const chunk = cases.slice(i, i + 60);
        const fields = chunk.map((c, j) => `w${j}: ${(conn === 'documents' ? documentsField : passagesField)(argText(c, cursors))}`).join('\n');
        const data = dataOf(await api.exec(conn === 'documents' ? `{ ${fields} }` : `{ document(key: "long") { ${fields} } }`));
        const root = conn === 'documents' ? data : data.document;
        chunk.forEach((c, j) => {
          const got = actual(root[`w${j}`]);
          expect({ args: c, ...specPage(all, c) }).toEqual({ args: c, ids: got.ids, hasNextPage: got.hasNextPage, hasPreviousPage: got.hasPreviousPage });
          // A cursor names its edge: paging from it again starts right after it.
          got.ids.forEach((id, k) => expect(got.cursors[k]).toBe(cursors[all.indexOf(id)]));
        });
      }
    }, 300_000);

    it('refuses negative or oversized sizes and foreign or garbage cursors, naming the argument', async () => {
      const otherKind = conn === 'documents' ? (await allCursors('passages'))[0] : (await allCursors('documents'))[0];
      const bad: [string, string][] = [
        ['first: -1', 'first'],
        ['last: -1', 'last'],
        [`first: ${MAX_PAGE + 1}`, 'first'],
        [`last: ${MAX_PAGE + 1}`, 'last'],
        [`after: "${otherKind}"`, 'after'],
        [`before: "${otherKind}"`, 'before'],
        ['before: "not a cursor"', 'before'],
        ['after: ""', 'after'],
      ];
      for (const [args, argument] of bad) {
        const result =
          conn === 'documents' ? await api.exec(`{ ${documentsField(args)} }`) : await api.exec(`{ document(key: "long") { ${passagesField(args)} } }`);
        expect({ args, error: result.errors?.[0]?.extensions }).toMatchObject({ args, error: { code: 'BAD_USER_INPUT', argument } });
      }
    });
  });

  it('an empty connection has no edges, null cursors and no pages either way', async () => {
    for (const args of ['', 'first: 3', 'last: 3', 'first: 0', 'last: 0']) {
      const conn = dataOf(await api.exec(`{ documents(source: "none"${args ? `, ${args}` : ''}) { totalCount ${PAGE_FIELDS} } }`)).documents;
      expect(conn).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null } });
    }
  });

  it('pages a filtered list both ways against the filtered store list', async () => {
    const thirds = (await api.testDb.db.query<{ id: number }>(`SELECT id FROM documents WHERE source = 'thirds' ORDER BY id`)).map((r) => r.id);
    expect(thirds).toHaveLength(3);
    const forward = actual(dataOf(await api.exec(`{ documents(source: "thirds", first: 2) { ${PAGE_FIELDS} } }`)).documents);
    expect(forward).toMatchObject({ ids: thirds.slice(0, 2), hasNextPage: true, hasPreviousPage: false });
    const rest = actual(dataOf(await api.exec(`{ documents(source: "thirds", first: 2, after: "${forward.endCursor}") { ${PAGE_FIELDS} } }`)).documents);
    expect(rest).toMatchObject({ ids: thirds.slice(2), hasNextPage: false, hasPreviousPage: true });
    const back = actual(dataOf(await api.exec(`{ documents(source: "thirds", last: 2, before: "${rest.startCursor}") { ${PAGE_FIELDS} } }`)).documents);
    expect(back).toMatchObject({ ids: thirds.slice(0, 2), hasNextPage: true, hasPreviousPage: false });
  });

  it('pages many documents’ passages backwards in one statement per level', async () => {
    const rows = await api.testDb.db.query<{ id: number; document_id: number }>('SELECT id, document_id FROM passages ORDER BY document_id, ordinal');
    const counter = api.testDb.db.statements;
    counter.reset();
    const data = dataOf(await api.exec(`{ documents(first: ${MAX_PAGE}) { edges { node { databaseId passages(last: 2) { ${PAGE_FIELDS} } } } } }`));
    // The documents; every document's passages page; their passage counts (the connection's totalCount).
    expect(counter.count).toBe(3);
    for (const { node } of data.documents.edges) {
      const mine = rows.filter((r) => r.document_id === node.databaseId).map((r) => r.id);
      expect(actual(node.passages)).toMatchObject({ ids: mine.slice(-2), hasNextPage: false, hasPreviousPage: mine.length > 2 });
    }
  });

  describe('global ids', () => {
    const NODE = `... on Document { databaseId key } ... on Section { databaseId title } ... on Passage { databaseId text }`;

    async function samples() {
      const doc = dataOf(
        await api.exec(
          `{ document(key: "long") { id databaseId key toc { id databaseId title } passages(first: 2) { edges { node { id databaseId text } } } } }`,
        ),
      ).document;
      return {
        Document: { id: doc.id, databaseId: doc.databaseId, key: doc.key },
        Section: doc.toc[3],
        Passage: doc.passages.edges[1].node,
      } as Record<'Document' | 'Section' | 'Passage', { id: string; databaseId: number }>;
    }

    it('are opaque and type-tagged, and node(id) returns the same object for each type', async () => {
      const s = await samples();
      expect(s.Document.databaseId).toBe(longId);
      expect(s.Passage.databaseId).toBe(passageIds[1]);
      for (const [type, object] of Object.entries(s)) {
        expect(object.id).not.toMatch(/^\d+$/);
        expect(Buffer.from(object.id, 'base64url').toString()).toBe(`${type}:${object.databaseId}`);
        const node = dataOf(await api.exec(`query($id: ID!) { node(id: $id) { __typename id ${NODE} } }`, { id: object.id })).node;
        expect(node).toEqual({ __typename: type, ...object });
      }
    });

    it('nodes(ids) answers in order with null for an unknown id, one statement per type', async () => {
      const s = await samples();
      const unknown = Buffer.from('Passage:2147483647').toString('base64url');
      const ids = [s.Passage.id, s.Document.id, unknown, s.Section.id, s.Document.id];
      const counter = api.testDb.db.statements;
      counter.reset();
      const nodes = dataOf(await api.exec(`query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ${NODE} } }`, { ids })).nodes;
      expect(counter.count).toBe(3);
      expect(nodes).toEqual([
        { __typename: 'Passage', ...s.Passage },
        { __typename: 'Document', ...s.Document },
        null,
        { __typename: 'Section', ...s.Section },
        { __typename: 'Document', ...s.Document },
      ]);
      expect(dataOf(await api.exec(`query($id: ID!) { node(id: $id) { id } }`, { id: unknown })).node).toBeNull();
      expect(dataOf(await api.exec(`{ nodes(ids: []) { id } }`)).nodes).toEqual([]);
    });

    it('refuses a plain integer, garbage, or too many ids in node/nodes with BAD_USER_INPUT', async () => {
      const s = await samples();
      const cases: [string, Record<string, unknown>, string][] = [
        ['query($id: ID!) { node(id: $id) { id } }', { id: String(longId) }, 'id'],
        ['query($id: ID!) { node(id: $id) { id } }', { id: 'garbage!' }, 'id'],
        ['query($id: ID!) { node(id: $id) { id } }', { id: Buffer.from('Link:1').toString('base64url') }, 'id'],
        ['query($id: ID!) { node(id: $id) { id } }', { id: Buffer.from('Document:0').toString('base64url') }, 'id'],
        ['query($id: ID!) { node(id: $id) { id } }', { id: `${s.Document.id}=` }, 'id'],
        ['query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: [s.Document.id, 'nope'] }, 'ids'],
        ['query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: Array(MAX_PAGE + 1).fill(s.Document.id) }, 'ids'],
      ];
      for (const [query, variables, argument] of cases) {
        const result = await api.exec(query, variables);
        expect({ variables, error: result.errors?.[0]?.extensions }).toMatchObject({ variables, error: { code: 'BAD_USER_INPUT', argument } });
      }
    });

    it('a global id of the wrong type is BAD_USER_INPUT wherever an id is taken, and changes nothing', async () => {
      const s = await samples();
      const cases: [string, Record<string, unknown>, string, RegExp][] = [
        ['query($id: ID) { document(id: $id) { id } }', { id: s.Passage.id }, 'id', /Passage id where a Document id/],
        ['query($id: ID!) { section(id: $id) { id } }', { id: s.Document.id }, 'id', /Document id where a Section id/],
        ['query($id: ID!) { passage(id: $id) { id } }', { id: s.Section.id }, 'id', /Section id where a Passage id/],
        ['mutation($id: ID!) { deleteDocument(id: $id) }', { id: s.Section.id }, 'id', /Section id where a Document id/],
        [
          'query($ids: [ID!]) { retrieve(question: "long", mode: LEXICAL, filter: { documentIds: $ids }) { passages { rank } } }',
          { ids: [s.Passage.id] },
          'filter.documentIds',
          /Passage id where a Document id/,
        ],
        ['query($id: ID!) { passage(id: $id) { id } }', { id: 'UGFzc2FnZTox!' }, 'id', /must be a Passage id/],
      ];
      for (const [query, variables, argument, message] of cases) {
        const result = await api.exec(query, variables);
        expect({ query, error: result.errors?.[0]?.extensions }).toMatchObject({ query, error: { code: 'BAD_USER_INPUT', argument } });
        expect(result.errors?.[0]?.message).toMatch(message);
      }
      const [{ n }] = await api.testDb.db.query<{ n: number }>('SELECT count(*)::int AS n FROM documents');
      expect(n).toBe(COUNT + 1);
    });

    it('old integer ids are still accepted and name the same objects as the global ids', async () => {
      const s = await samples();
      const byInt = dataOf(
        await api.exec(`query($d: ID, $s: ID!, $p: ID!) { document(id: $d) { id } section(id: $s) { id } passage(id: $p) { id } }`, {
          d: String(s.Document.databaseId),
          s: String(s.Section.databaseId),
          p: s.Passage.databaseId, // an ID variable may be sent as a JSON number
        }),
      );
      expect(byInt).toEqual({ document: { id: s.Document.id }, section: { id: s.Section.id }, passage: { id: s.Passage.id } });
      const byGlobal = dataOf(
        await api.exec(`query($d: ID, $s: ID!, $p: ID!) { document(id: $d) { databaseId } section(id: $s) { databaseId } passage(id: $p) { databaseId } }`, {
          d: s.Document.id,
          s: s.Section.id,
          p: s.Passage.id,
        }),
      );
      expect(byGlobal).toEqual({ document: { databaseId: longId }, section: { databaseId: s.Section.databaseId }, passage: { databaseId: passageIds[1] } });

      // A retrieval filter: the integer and the global id restrict to the same document.
      const ask =
        'query($ids: [ID!]) { retrieve(question: "document", mode: LEXICAL, k2: 50, filter: { documentIds: $ids }) { passages { passage { databaseId document { key } } } } }';
      // by key: one ingest's ids need not follow its input order on PostgreSQL
      const [{ id: one }] = await api.testDb.db.query<{ id: number }>(`SELECT id FROM documents WHERE key = 'doc-4'`);
      const oneGlobal = Buffer.from(`Document:${one}`).toString('base64url');
      const viaInt = dataOf(await api.exec(ask, { ids: [String(one)] })).retrieve.passages;
      const viaGlobal = dataOf(await api.exec(ask, { ids: [oneGlobal] })).retrieve.passages;
      expect(viaInt.length).toBeGreaterThan(0);
      expect(viaGlobal).toEqual(viaInt);
      expect(new Set(viaInt.map((p: any) => p.passage.document.key))).toEqual(new Set(['doc-4']));

      // Deleting by integer id, then by global id.
      const extra = { key: 'extra', title: 'Extra', abstract: 'To be deleted.' };
      for (const form of ['integer', 'global'] as const) {
        dataOf(await api.exec(INGEST, { docs: [extra] }));
        const created = dataOf(await api.exec(`{ document(key: "extra") { id databaseId } }`)).document;
        const id = form === 'integer' ? String(created.databaseId) : created.id;
        expect(dataOf(await api.exec('mutation($id: ID!) { deleteDocument(id: $id) }', { id })).deleteDocument).toBe(true);
        expect(dataOf(await api.exec(`query($id: ID!) { node(id: $id) { id } }`, { id: created.id })).node).toBeNull();
      }
    });
  });
});

describe('Relay: query cost counts last and ids as it counts first', () => {
  async function cost(query: string): Promise<number | undefined> {
    const document = parse(query);
    const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION) as OperationDefinitionNode;
    return measureOperation(await buildGraphQLSchema(), document, operation, {}, 100_000).cost;
  }

  it('prices a backward page like a forward page of the same size, and nodes by its ids', async () => {
    const page = (outer: string, inner: string) => `{ documents${outer} { edges { node { key passages${inner} { edges { node { text } } } } } } }`;
    const backward = await cost(page('(last: 50)', '(last: 40)'));
    expect(backward).toBe(await cost(page('(first: 50)', '(first: 40)')));
    // Without sizes, the default page (20 of each) is assumed: less than 50 × 40.
    expect(backward).toBeGreaterThan((await cost(page('', ''))) as number);
    const ids = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => Buffer.from(`Document:${i + 1}`).toString('base64url')));
    // 1 for the field, plus 1 (id) per item: one item per id, not the 10 an unsized list is guessed at.
    expect(await cost(`{ nodes(ids: ${ids(50)}) { id } }`)).toBe(51);
    expect(await cost(`{ nodes(ids: ${ids(2)}) { id } }`)).toBe(3);
  });
});
