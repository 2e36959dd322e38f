import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../src/paths';
import { BM25_INDEX } from '../src/store/bm25-index';
import { ADAPTER_ROW } from '../src/store/adapters';
import { MODEL_ROW } from '../src/store/embeddings';
import { FEEDBACK_ROW } from '../src/store/feedback';
import { INGEST_JOB_ROW } from '../src/store/ingest-jobs';
import { JOB_ROW } from '../src/store/jobs';
import { DOCUMENT_ROW, LINK_ROW, PASSAGE_ROW, SECTION_ROW, type Column } from '../src/store/rows';
import { TUNE_RUN_ROW } from '../src/store/tune-runs';
import { useTestDatabase } from './helpers/database';

/**
 * prisma/schema.prisma must describe the tables the SQL migrations create: same tables, same
 * columns, compatible types and nullability. (Prisma's own migrate cannot run offline, so the
 * SQL files are the source of truth and this test keeps the Prisma schema honest.)
 */

interface PrismaColumn {
  table: string;
  column: string;
  type: string;
  optional: boolean;
  list: boolean;
  native?: string;
}

function parsePrismaSchema(text: string): PrismaColumn[] {
  const models = [...text.matchAll(/^model\s+(\w+)\s*\{([\s\S]*?)^\}/gm)];
  const modelNames = new Set(models.map((m) => m[1]));
  const columns: PrismaColumn[] = [];
  for (const [, , body] of models) {
    const table = /@@map\("([^"]+)"\)/.exec(body)?.[1];
    if (!table) throw new Error('every model needs @@map to its table');
    for (const line of body.split('\n')) {
      const m = /^\s*(\w+)\s+(\w+(?:\("[^"]*"\))?)(\[\])?(\?)?(.*)$/.exec(line);
      if (!m || line.trim().startsWith('@@') || line.trim().startsWith('//')) continue;
      const [, field, type, list, optional, attrs] = m;
      if (modelNames.has(type)) continue; // relation field, no column
      columns.push({
        table,
        column: /@map\("([^"]+)"\)/.exec(attrs)?.[1] ?? field,
        type,
        optional: Boolean(optional),
        list: Boolean(list),
        native: /@db\.(\w+)/.exec(attrs)?.[1],
      });
    }
  }
  return columns;
}

/** The PostgreSQL type each Prisma scalar maps to. */
function expectedUdt(c: PrismaColumn): string {
  const unsupported = /^Unsupported\("(\w+)/.exec(c.type);
  if (unsupported) return unsupported[1];
  const base: Record<string, string> = {
    Int: 'int4',
    BigInt: 'int8',
    String: 'text',
    Boolean: 'bool',
    Float: c.native === 'Real' ? 'float4' : 'float8',
    Json: 'jsonb',
    Bytes: 'bytea',
    DateTime: c.native === 'Timestamptz' ? 'timestamptz' : 'timestamp',
  };
  const udt = base[c.type];
  if (!udt) throw new Error(`no mapping for Prisma type ${c.type}`);
  return c.list ? `_${udt}` : udt;
}

describe('prisma/schema.prisma agrees with migrations/', () => {
  const t = useTestDatabase();

  it('has the same tables, columns, types and nullability', async () => {
    const prisma = parsePrismaSchema(readFileSync(join(packageRoot(), 'prisma/schema.prisma'), 'utf8'));
    const db = await t.db.query<{ table: string; column: string; udt: string; nullable: string }>(
      `SELECT table_name AS table, column_name AS column, udt_name AS udt, is_nullable AS nullable
       FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`,
    );
    const key = (table: string, column: string) => `${table}.${column}`;
    // The BM25 index's table exists only where the server has pg_textsearch (migration 0026).
    const tables = new Set(db.map((c) => c.table));
    const expected = prisma.filter((c) => tables.has(c.table) || c.table !== BM25_INDEX.table);
    expect(expected.map((c) => key(c.table, c.column)).sort()).toEqual(db.map((c) => key(c.table, c.column)).sort());
    const byKey = new Map(db.map((c) => [key(c.table, c.column), c]));
    for (const c of expected) {
      const col = byKey.get(key(c.table, c.column))!;
      expect(`${key(c.table, c.column)} ${col.udt}`).toBe(`${key(c.table, c.column)} ${expectedUdt(c)}`);
      // Prisma lists are required arrays; only scalars carry `?`.
      expect(`${key(c.table, c.column)} nullable=${col.nullable === 'YES'}`).toBe(`${key(c.table, c.column)} nullable=${c.optional}`);
    }
  });

  // The raw SQL's column lists come from these maps; their fields are the Prisma models' (the compiler checks that).
  it('has the row maps of src/store/rows.ts name every column Prisma reads, with its type', async () => {
    const prisma = parsePrismaSchema(readFileSync(join(packageRoot(), 'prisma/schema.prisma'), 'utf8'));
    const udt: Record<Column['type'], string> = {
      int: 'int4',
      'int[]': '_int4',
      bigint: 'int8',
      bool: 'bool',
      text: 'text',
      'text[]': '_text',
      jsonb: 'jsonb',
      timestamptz: 'timestamptz',
    };
    // [table, map, the columns its row leaves out (each with why, at the row type)]
    const maps: [string, Record<string, Column>, string[]][] = [
      ['documents', DOCUMENT_ROW, []],
      ['sections', SECTION_ROW, []],
      ['passages', PASSAGE_ROW, []],
      ['links', LINK_ROW, []],
      ['feedback', FEEDBACK_ROW, []],
      ['tune_runs', TUNE_RUN_ROW, []],
      ['embedding_jobs', JOB_ROW, []],
      ['embedding_models', MODEL_ROW, ['created_at']],
      ['ingest_jobs', INGEST_JOB_ROW, ['vector_model']],
      ['query_adapters', ADAPTER_ROW, ['document_weights', 'passage_weights']],
    ];
    for (const [table, map, unread] of maps) {
      const scalars = prisma.filter((c) => c.table === table && !c.type.startsWith('Unsupported') && !unread.includes(c.column)).map((c) => c.column);
      expect(
        Object.values(map)
          .map((c) => c.column)
          .sort(),
      ).toEqual(scalars.sort());
      const db = await t.db.query<{ column: string; udt: string }>(
        `SELECT column_name AS column, udt_name AS udt FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`,
        [table],
      );
      const dbUdt = new Map(db.map((c) => [c.column, c.udt]));
      for (const c of Object.values(map)) expect(`${table}.${c.column} ${udt[c.type]}`).toBe(`${table}.${c.column} ${dbUdt.get(c.column)}`);
    }
  });
});
