import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useTestServer } from './helpers/server';

/**
 * Malformed input that used to reach an internal error. Each request goes through
 * the real HTTP server and must be refused with BAD_USER_INPUT naming the argument, with no
 * stack, path or SQL text in the body, and nothing changed in the store.
 */

const cursor = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

/** A value nested `levels` deep: {"a":{"a":…{"a":1}}}. Built iteratively (JSON.stringify is not). */
function deepJson(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}
/** A title tree whose sections nest `levels` deep. */
function deepSections(levels: number): string {
  return '['.concat('{"title":"s","sections":['.repeat(levels - 1), '{"title":"s","text":"leaf"}', ']}'.repeat(levels - 1), ']');
}

/** What must never reach a client: stack frames, file paths, Prisma or PostgreSQL text. */
const LEAKS = [/\bat .+:\d+:\d+/, /\/work\/|node_modules|\/tmp\//, /prisma/i, /invocation/, /\b22021\b|\b22P05\b/, /SELECT|INSERT/, /stacktrace/];

const models = mkdtempSync(join(tmpdir(), 'dhr-models-'));
const outside = mkdtempSync(join(tmpdir(), 'dhr-outside-'));

function modelFolder(dir: string, config = '{"name":"x"}'): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'model.onnx'), 'not onnx');
  writeFileSync(join(dir, 'tokenizer.json'), '{}');
  writeFileSync(join(dir, 'dhr-model.json'), config);
  return dir;
}

describe('malformed input answers BAD_USER_INPUT and changes nothing', () => {
  const server = useTestServer({ MODELS_DIR: models });

  const snapshot = async () =>
    server.db.query(
      `SELECT (SELECT count(*)::int FROM documents) AS documents, (SELECT count(*)::int FROM sections) AS sections,
              (SELECT count(*)::int FROM passages) AS passages, (SELECT count(*)::int FROM api_keys) AS keys,
              (SELECT count(*)::int FROM embedding_models) AS models,
              (SELECT string_agg(content_hash, ',' ORDER BY id) FROM documents) AS hashes`,
    );

  beforeAll(async () => {
    const seeded = await server.post(`mutation { ingestDocuments(documents: [
      { key: "doc", title: "Doc", source: "s", metadata: { lang: "en" }, sections: [{ title: "A", text: "Some text." }] }]) { created } }`);
    expect(seeded.body.data.ingestDocuments.created).toBe(1);

    // Model folders: one real one with a file that is not JSON, escapes by symlink, a folder outside.
    modelFolder(join(models, 'bad-json'), 'root:x:0:0:root:/root:/bin/bash');
    modelFolder(join(outside, 'elsewhere'), '{"name":"elsewhere"}');
    symlinkSync(join(outside, 'elsewhere'), join(models, 'escape'));
    writeFileSync(join(outside, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n');
    modelFolder(join(models, 'linked-config'));
    rmSync(join(models, 'linked-config', 'dhr-model.json'));
    symlinkSync(join(outside, 'passwd'), join(models, 'linked-config', 'dhr-model.json'));
    mkdirSync(join(models, 'empty'));
  });
  afterAll(() => {
    rmSync(models, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  const NUL = '\u0000';
  const LONE = '\ud800';
  const RETRIEVE = `query($f: RetrievalFilter) { retrieve(question: "text", k1: 5, k2: 5, mode: LEXICAL, filter: $f) { passages { rank } } }`;
  const INGEST = `mutation($docs: [DocumentInput!]!) { ingestDocuments(documents: $docs) { created failed } }`;

  // [name, query, variables (a JSON text, so it can carry what JSON.stringify would not build), argument]
  const cases: [string, string, string, string][] = [
    ['document cursor past int4', `{ documents(first: 1, after: "${cursor('document:9999999999')}") { totalCount } }`, '{}', 'after'],
    ['passage cursor past int4', `{ document(key: "doc") { passages(after: "${cursor('passage:2147483648')}") { totalCount } } }`, '{}', 'after'],
    ['negative document cursor', `{ documents(after: "${cursor('document:-1')}") { totalCount } }`, '{}', 'after'],
    ['a cursor of another connection', `{ documents(after: "${cursor('passage:3')}") { totalCount } }`, '{}', 'after'],
    ['NUL in a literal titleContains', `{ documents(titleContains: "a\\u0000b") { totalCount } }`, '{}', 'titleContains'],
    ...[NUL, LONE].flatMap((bad): [string, string, string, string][] => {
      const label = bad === NUL ? 'NUL' : 'lone surrogate';
      const v = (value: unknown) => JSON.stringify(value);
      return [
        [`${label} in titleContains`, `query($t: String) { documents(titleContains: $t) { totalCount } }`, v({ t: `x${bad}` }), 'titleContains'],
        [`${label} in source`, `query($s: String) { documents(source: $s) { totalCount } }`, v({ s: `s${bad}` }), 'source'],
        [`${label} in key`, `query($k: String) { document(key: $k) { id } }`, v({ k: `doc${bad}` }), 'key'],
        [`${label} in question`, `query($q: String!) { retrieve(question: $q, mode: LEXICAL) { mode } }`, v({ q: `text ${bad}` }), 'question'],
        [`${label} in filter.sources`, RETRIEVE, v({ f: { sources: ['s', `s${bad}`] } }), 'filter.sources'],
        [`${label} in a filter.metadata value`, RETRIEVE, v({ f: { metadata: { lang: `en${bad}` } } }), 'filter.metadata'],
        [`${label} in a filter.metadata key`, RETRIEVE, v({ f: { metadata: { [`la${bad}ng`]: 'en' } } }), 'filter.metadata'],
        [`${label} in a nested filter.metadata value`, RETRIEVE, v({ f: { metadata: { a: { b: [1, `x${bad}`] } } } }), 'filter.metadata'],
        [`${label} in a model name`, `mutation($m: String!) { dropEmbeddingModel(model: $m) }`, v({ m: `m${bad}` }), 'model'],
      ];
    }),
    ['filter.metadata nested 5,000 levels', RETRIEVE, `{"f":{"metadata":${deepJson(5000)}}}`, 'filter.metadata'],
    ['filter.metadata nested 33 levels', RETRIEVE, `{"f":{"metadata":${deepJson(33)}}}`, 'filter.metadata'],
    ['ingest sections nested 10,000 levels', INGEST, `{"docs":[{"key":"deep","title":"Deep","sections":${deepSections(10_000)}}]}`, 'documents.sections'],
    ['ingest sections nested 65 levels', INGEST, `{"docs":[{"key":"deep","title":"Deep","sections":${deepSections(65)}}]}`, 'documents.sections'],
    ['ingest metadata nested 5,000 levels', INGEST, `{"docs":[{"key":"deep","title":"Deep","text":"t","metadata":${deepJson(5000)}}]}`, 'documents.metadata'],
  ];

  /** Posts the variables as JSON text: JSON.stringify cannot build 10,000 levels (it recurses). */
  const postRaw = async (query: string, variables: string) => {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.adminKey}` },
      body: `{"query":${JSON.stringify(query)},"variables":${variables}}`,
    });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text), text };
  };

  it.each(cases)('%s', async (_name, query, variables, argument) => {
    const before = await snapshot();
    const reply = await postRaw(query, variables);
    expect(reply.status).toBeLessThan(500);
    const error = reply.body.errors?.[0];
    expect(error?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument });
    expect(error.message).toContain(argument.split('.')[0]);
    for (const leak of LEAKS) expect(reply.text).not.toMatch(leak);
    expect(await snapshot()).toEqual(before);
  });

  it('still takes what is within the bounds: 32 levels of metadata, 64 levels of sections', async () => {
    const filter = await postRaw(RETRIEVE, `{"f":{"metadata":${deepJson(32)}}}`);
    expect(filter.body.errors).toBeUndefined();
    const ingest = await postRaw(INGEST, `{"docs":[{"key":"deep","title":"Deep","sections":${deepSections(64)}}]}`);
    expect(ingest.body.data.ingestDocuments).toEqual({ created: 1, failed: 0 });
    const depth = await server.db.query<{ n: number }>(
      `SELECT max(depth)::int AS n FROM sections s JOIN documents d ON d.id = s.document_id WHERE d.key = 'deep'`,
    );
    expect(depth[0].n).toBe(64);
    expect(
      (await server.post(`mutation { deleteDocument(id: "${(await server.db.query<{ id: number }>(`SELECT id FROM documents WHERE key = 'deep'`))[0].id}") }`))
        .body.data.deleteDocument,
    ).toBe(true);
  });

  describe('registerEmbeddingModel reads model folders inside MODELS_DIR only', () => {
    const REGISTER = `mutation($p: String!) { registerEmbeddingModel(path: $p) { name } }`;

    it('gives one answer for every path that is not a model folder there, symlink escapes included', async () => {
      const paths = [
        '/etc', // exists, outside
        join(outside, 'elsewhere'), // a complete model folder, outside
        `file://${join(outside, 'elsewhere')}`,
        '../' + join('..', outside, 'elsewhere'),
        'escape', // a symlink inside MODELS_DIR to the folder outside
        'linked-config', // dhr-model.json is a symlink to a file outside
        'missing',
        'empty',
      ];
      const messages = new Set<string>();
      for (const path of paths) {
        const before = await snapshot();
        const reply = await server.post(REGISTER, { p: path });
        const error = reply.body.errors?.[0];
        expect(error?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', argument: 'path' });
        expect(reply.text).not.toContain('root:x');
        for (const leak of LEAKS) expect(reply.text).not.toMatch(leak);
        messages.add(error.message);
        expect(await snapshot()).toEqual(before);
      }
      expect([...messages]).toEqual([expect.stringContaining('not a model folder in the models directory (MODELS_DIR)')]);
    });

    it('never echoes a model file, nor where MODELS_DIR is', async () => {
      const before = await snapshot();
      const reply = await server.post(REGISTER, { p: 'bad-json' });
      expect(reply.body.errors?.[0].extensions).toMatchObject({ code: 'MODEL_INVALID', argument: 'path' });
      expect(reply.body.errors[0].message).toBe('model "bad-json": MODELS_DIR/bad-json/dhr-model.json is not valid JSON');
      expect(reply.text).not.toContain('root:x');
      expect(reply.text).not.toContain(models);
      expect(await snapshot()).toEqual(before);
    });
  });
});
