/**
 * Retrieval's HNSW settings travel with each search but reach a connection only when they change:
 * one round trip per repeated kind of query, on both databases.
 */
import { PostgresDatabase } from '../src/store/postgres';
import { useTestDatabase } from './helpers/database';

describe('Database.queryWithSettings', () => {
  const t = useTestDatabase();

  const read = async (settings: Record<string, string>) => {
    const before = t.db.statements.count;
    const [row] = await t.db.queryWithSettings<{ ef: string; scan: string }>(
      settings,
      `SELECT current_setting('hnsw.ef_search') AS ef, current_setting('hnsw.iterative_scan') AS scan`,
    );
    return { ...row, statements: t.db.statements.count - before };
  };

  it('applies settings once per connection and again when they change', async () => {
    const a = { 'hnsw.iterative_scan': 'strict_order', 'hnsw.ef_search': '123' };
    expect(await read(a)).toEqual({ ef: '123', scan: 'strict_order', statements: 2 });
    expect(await read(a)).toEqual({ ef: '123', scan: 'strict_order', statements: 1 });
    expect(await read({ ...a, 'hnsw.ef_search': '77' })).toEqual({ ef: '77', scan: 'strict_order', statements: 2 });
    // A transaction in between does not undo them (they are session settings, not SET LOCAL).
    await t.db.transaction((tx) => tx.query('SELECT 1'));
    expect(await read({ ...a, 'hnsw.ef_search': '77' })).toMatchObject({ ef: '77', statements: 1 });
  });
});

const onServer = process.env.DATABASE_URL ? describe : describe.skip;

onServer('PostgreSQL: search statements prepared per connection', () => {
  const t = useTestDatabase();
  const open = (preparedStatements: number) => new PostgresDatabase({ url: t.url!, maxConnections: 1, preparedStatements });
  const settings = { 'hnsw.ef_search': '50' };
  const texts = ['SELECT 1 AS x', 'SELECT 2 AS x', 'SELECT 3 AS x'];

  it('prepares each statement text once, up to the bound, with plans made per run, parameters bound per run', async () => {
    const db = open(2);
    try {
      for (let round = 0; round < 2; round++) {
        for (const [i, sql] of texts.entries()) expect(await db.queryWithSettings<{ x: number }>(settings, sql)).toEqual([{ x: i + 1 }]);
      }
      // One connection: the pool's plain queries see the same session.
      const prepared = await db.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements ORDER BY statement');
      expect(prepared.map((p) => p.statement)).toEqual(texts.slice(0, 2));
      expect(await db.query('SELECT current_setting($1) AS mode', ['plan_cache_mode'])).toEqual([{ mode: 'force_custom_plan' }]);
      // Parameters still bind per run.
      expect(await db.queryWithSettings(settings, 'SELECT $1::int + 1 AS y', [41])).toEqual([{ y: 42 }]);
      expect(await db.queryWithSettings(settings, 'SELECT $1::int + 1 AS y', [1])).toEqual([{ y: 2 }]);
    } finally {
      await db.close();
    }
  });

  it('prepares nothing with DB_PREPARED_STATEMENTS=0', async () => {
    const db = open(0);
    try {
      for (const sql of texts) await db.queryWithSettings(settings, sql);
      expect(await db.query('SELECT count(*)::int AS n FROM pg_prepared_statements')).toEqual([{ n: 0 }]);
    } finally {
      await db.close();
    }
  });
});
