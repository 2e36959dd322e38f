import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMigrations, migrate, MigrationError } from '../src/store/migrate';
import { PgliteDatabase } from '../src/store/pglite';
import { useTestDatabase } from './helpers/database';

describe('migrations runner', () => {
  const t = useTestDatabase({ migrated: false, each: true });

  it('applies every migration once, records it, and is a no-op the second time', async () => {
    const versions = loadMigrations().map((m) => m.version);
    expect(versions[0]).toBe('0001_title_tree');
    expect(await migrate(t.db)).toEqual(versions);
    expect(await migrate(t.db)).toEqual([]);
    const rows = await t.db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(versions);
    const ext = await t.db.query("SELECT 1 FROM pg_extension WHERE extname = 'vector'");
    expect(ext).toHaveLength(1);
    // Vectors stay in the row (not TOAST): exact scoring reads them without a second lookup.
    const storage = await t.db.query<{ rel: string; attstorage: string }>(
      `SELECT attrelid::regclass::text AS rel, attstorage FROM pg_attribute
       WHERE attname = 'embedding' AND attrelid IN ('document_embeddings'::regclass, 'passage_embeddings'::regclass) ORDER BY 1`,
    );
    expect(storage).toEqual([
      { rel: 'document_embeddings', attstorage: 'm' },
      { rel: 'passage_embeddings', attstorage: 'm' },
    ]);
  });

  it('rolls back a failing migration whole and refuses an edited one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dhr-migrations-'));
    writeFileSync(join(dir, '0001_ok.sql'), 'CREATE TABLE m_ok (id int);');
    writeFileSync(join(dir, '0002_bad.sql'), 'CREATE TABLE m_half (id int); SELECT no_such_function();');
    await expect(migrate(t.db, loadMigrations(dir))).rejects.toThrow(/no_such_function/);
    // 0001 stays applied; 0002 left nothing behind.
    const tables = await t.db.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_name IN ('m_ok', 'm_half')");
    expect(tables.map((r) => r.table_name)).toEqual(['m_ok']);

    writeFileSync(join(dir, '0001_ok.sql'), 'CREATE TABLE m_ok (id int, edited int);');
    writeFileSync(join(dir, '0002_bad.sql'), 'SELECT 1;');
    await expect(migrate(t.db, loadMigrations(dir))).rejects.toThrow(MigrationError);
    await expect(migrate(t.db, loadMigrations(dir))).rejects.toThrow(/0001_ok was changed after it was applied/);
  });

  it('opens a store that applied a file before its comments were reworded, and only such a file', async () => {
    const migrations = loadMigrations();
    await migrate(t.db, migrations);
    const reworded = migrations.filter((m) => m.accepted.length > 1);
    expect(reworded.length).toBeGreaterThan(0);
    for (const m of reworded) {
      expect(m.accepted[0]).toBe(m.checksum);
      // what a store migrated before the rewording recorded
      await t.db.query('UPDATE schema_migrations SET checksum = $2 WHERE version = $1', [m.version, m.accepted[1]]);
    }
    expect(await migrate(t.db, migrations)).toEqual([]);
    await t.db.query('UPDATE schema_migrations SET checksum = $2 WHERE version = $1', [reworded[0].version, 'f'.repeat(64)]);
    await expect(migrate(t.db, migrations)).rejects.toThrow(new RegExp(`${reworded[0].version} was changed after it was applied`));
  });
});

describe('a database without pgvector', () => {
  it('stops with a message that says how to install it, and creates nothing', async () => {
    const db = await PgliteDatabase.open({ pgvector: false });
    try {
      await expect(migrate(db)).rejects.toThrow(MigrationError);
      await expect(migrate(db)).rejects.toThrow(/pgvector is not installed.*apt install postgresql-<major>-pgvector/);
      const tables = await db.query("SELECT 1 FROM information_schema.tables WHERE table_name IN ('documents', 'schema_migrations')");
      expect(tables).toEqual([]);
    } finally {
      await db.close();
    }
  });
});
