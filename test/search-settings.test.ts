/**
 * Retrieval's HNSW settings travel with each search but reach a connection only when they change:
 * one round trip per repeated kind of query, on both databases.
 */
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
