import { ingestDocuments } from '../src/pipeline/ingest';
import { indexLexical } from '../src/store/lexical';
import { DEFAULT_INGEST_OPTIONS } from '../src/ingest/types';
import { useTestDatabase } from './helpers/database';

describe('store: ingest transactions and link resolution', () => {
  const t = useTestDatabase({ each: true });

  it('resolves every link when linked documents are written concurrently', async () => {
    const n = 40;
    const docs = Array.from({ length: n }, (_, i) => ({
      key: `k${i}`,
      title: `Title ${i}`,
      text: `Points to [next](k${(i + 1) % n}) and to [[Title ${(i + n - 1) % n}|previous]].`,
    }));
    const summary = await ingestDocuments(t.db, docs, { ...DEFAULT_INGEST_OPTIONS, concurrency: 8 });
    expect(summary.created).toBe(n);
    const rows = await t.db.query<{ total: number; resolved: number; right: number }>(
      `SELECT count(*)::int AS total, count(l.target_document_id)::int AS resolved,
              count(*) FILTER (WHERE (l.anchor_text = 'next' AND t.key = 'k' || ((substr(s.key, 2)::int + 1) % ${n}))
                                  OR (l.anchor_text = 'previous' AND t.key = 'k' || ((substr(s.key, 2)::int + ${n - 1}) % ${n})))::int AS right
       FROM links l JOIN documents s ON s.id = l.document_id LEFT JOIN documents t ON t.id = l.target_document_id`,
    );
    expect(rows[0]).toEqual({ total: 2 * n, resolved: 2 * n, right: 2 * n });
  });

  it('writes the same key twice in one batch in batch order: the last one wins', async () => {
    const summary = await ingestDocuments(
      t.db,
      [
        { key: 'same', title: 'First', text: 'one' },
        { key: 'same', title: 'Second', text: 'two' },
        { key: 'same', title: 'Second', text: 'two' },
      ],
      { ...DEFAULT_INGEST_OPTIONS, concurrency: 4 },
    );
    expect(summary.outcomes.map((o) => o.status)).toEqual(['created', 'updated', 'unchanged']);
    const rows = await t.db.query<{ title: string; text: string }>('SELECT d.title, p.text FROM documents d JOIN passages p ON p.document_id = d.id');
    expect(rows).toEqual([{ title: 'Second', text: 'two' }]);
  });

  it('rolls a document back whole when the database fails midway, and keeps the others', async () => {
    // A real failure inside the transaction, after sections and passages were written.
    await t.db.exec(`
      CREATE FUNCTION refuse_link() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.target = 'explode' THEN RAISE EXCEPTION 'link refused by test trigger'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_link BEFORE INSERT ON links FOR EACH ROW EXECUTE FUNCTION refuse_link();`);
    const summary = await ingestDocuments(
      t.db,
      [
        { key: 'ok', title: 'Ok', sections: [{ title: 'A', text: 'fine [[ok2]]' }] },
        {
          key: 'boom',
          title: 'Boom',
          sections: [
            { title: 'A', text: 'text' },
            { title: 'B', text: 'see [[explode]]' },
          ],
        },
      ],
      DEFAULT_INGEST_OPTIONS,
    );
    expect(summary.outcomes.map((o) => o.status)).toEqual(['created', 'failed']);
    expect(summary.outcomes[1].message).toMatch(/document "boom": link refused by test trigger/);
    const rows = await t.db.query<{ d: number; s: number; p: number }>(
      `SELECT (SELECT count(*)::int FROM documents) AS d, (SELECT count(*)::int FROM sections) AS s,
              (SELECT count(*)::int FROM passages) AS p`,
    );
    expect(rows[0]).toEqual({ d: 1, s: 1, p: 1 });

    // A failed replacement leaves the old version in place.
    await t.db.exec(`DROP TRIGGER refuse_link ON links`);
    await ingestDocuments(t.db, [{ key: 'boom', title: 'Boom', text: 'old version' }], DEFAULT_INGEST_OPTIONS);
    await t.db.exec(`CREATE TRIGGER refuse_link BEFORE INSERT ON links FOR EACH ROW EXECUTE FUNCTION refuse_link();`);
    const again = await ingestDocuments(t.db, [{ key: 'boom', title: 'Boom', text: 'new [[explode]]' }], DEFAULT_INGEST_OPTIONS);
    expect(again.failed).toBe(1);
    const texts = await t.db.query<{ text: string }>(`SELECT p.text FROM passages p JOIN documents d ON d.id = p.document_id WHERE d.key = 'boom'`);
    expect(texts).toEqual([{ text: 'old version' }]);
  });

  it('indexes passages for full-text search in a separate step, only those not indexed yet', async () => {
    await ingestDocuments(
      t.db,
      [
        { key: 'a', title: 'Rivers', sections: [{ title: 'Flow', text: 'The rivers were flowing.' }] },
        { key: 'b', title: 'Mountains', text: 'Peaks and valleys.' },
      ],
      DEFAULT_INGEST_OPTIONS,
    );
    const unindexed = async () => (await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM passages WHERE search IS NULL'))[0].n;
    expect(await unindexed()).toBe(2);
    const [a] = await t.db.query<{ id: number }>(`SELECT id FROM documents WHERE key = 'a'`);
    expect(await indexLexical(t.db, [a.id])).toBe(1);
    expect(await unindexed()).toBe(1);
    expect(await indexLexical(t.db)).toBe(1);
    expect(await indexLexical(t.db)).toBe(0);
    // English stemming over title path and text: "flow" finds "flowing", the section title counts.
    const hits = await t.db.query<{ text: string }>(`SELECT text FROM passages WHERE search @@ plainto_tsquery('english', 'flow river')`);
    expect(hits).toEqual([{ text: 'The rivers were flowing.' }]);
    // A changed document's new passages need indexing again; the unchanged one stays indexed.
    await ingestDocuments(t.db, [{ key: 'a', title: 'Rivers', sections: [{ title: 'Flow', text: 'Changed.' }] }], DEFAULT_INGEST_OPTIONS);
    expect(await unindexed()).toBe(1);
  });
});
