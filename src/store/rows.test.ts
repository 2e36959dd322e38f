import { fromJson } from '../retrieval/statements/rows';
import {
  columnsOf,
  DOCUMENT_ROW,
  DOCUMENT_WRITE,
  ingestColumns,
  PASSAGE_COLUMNS,
  PASSAGE_ROW,
  PASSAGE_WRITE,
  selectList,
  type Columns,
  type PassageRow,
} from './rows';

describe('row maps', () => {
  it('give the SELECT lists, each column under its field name', () => {
    expect(PASSAGE_COLUMNS).toBe(
      'p.id, p.document_id AS "documentId", p.section_id AS "sectionId", p.ordinal, p.text, p.title_path AS "titlePath", p.word_count AS "wordCount"',
    );
    expect(selectList(DOCUMENT_ROW, 'd', ['id', 'contentHash'])).toBe('d.id, d.content_hash AS "contentHash"');
  });

  it("give ingest's lists of the ingested columns, arrays travelling as JSON", () => {
    expect(PASSAGE_WRITE.names).toBe('ordinal, text, title_path, word_count');
    expect(PASSAGE_WRITE.definitions).toBe('ordinal int, text text, title_path jsonb, word_count int');
    expect(PASSAGE_WRITE.values('r')).toBe('r.ordinal, r.text, ARRAY(SELECT jsonb_array_elements_text(r.title_path)), r.word_count');
    expect(PASSAGE_WRITE.values('r', { titlePath: 't.path' })).toBe('r.ordinal, r.text, t.path, r.word_count');
    expect(PASSAGE_WRITE.record({ ordinal: 2, text: 'x', titlePath: ['T'], wordCount: 1 })).toEqual({
      ordinal: 2,
      text: 'x',
      title_path: ['T'],
      word_count: 1,
    });
    const params = DOCUMENT_WRITE.placeholders(1);
    expect(Object.values(params).join(', ')).toBe('$1, $2, $3, $4, $5, $6::jsonb, $7');
    expect(DOCUMENT_WRITE.assignments(params, ['key'])).toBe('title = $2, abstract = $3, summary = $4, source = $5, metadata = $6::jsonb, content_hash = $7');
    expect(DOCUMENT_WRITE.params({ key: 'k', title: 't', abstract: '', summary: 's', source: null, metadata: { a: 1 }, contentHash: 'h' })).toEqual([
      'k',
      't',
      '',
      's',
      null,
      '{"a":1}',
      'h',
    ]);
  });

  it('carry a new column into every list from its one entry', () => {
    // What a migration adding passages.language and its Prisma field would need here.
    const withLanguage = { ...PASSAGE_ROW, language: { column: 'language', type: 'text', ingested: true } } as const;
    const write = ingestColumns<PassageRow & { language: string }, typeof withLanguage>(withLanguage);
    expect(selectList(withLanguage, 'p').endsWith(', p.language')).toBe(true);
    expect(write.names).toBe('ordinal, text, title_path, word_count, language');
    expect(write.definitions.endsWith(', language text')).toBe(true);
  });

  it('are held to the row types: a field without its column does not compile', () => {
    // @ts-expect-error: text has no entry
    const partial: Columns<Pick<PassageRow, 'id' | 'text'>> = { id: { column: 'id', type: 'int' } };
    expect(partial.id.column).toBe('id');
  });

  it('are made from the fields’ types, each column the field in snake_case, read as a cast asks', () => {
    const map = columnsOf<{ id: number; bytesDone: number; settingsVersion: number | null }>()({
      id: 'int',
      bytesDone: { type: 'bigint', readAs: 'float8' },
      settingsVersion: 'int',
    });
    expect(map).toEqual({
      id: { column: 'id', type: 'int' },
      bytesDone: { column: 'bytes_done', type: 'bigint', readAs: 'float8' },
      settingsVersion: { column: 'settings_version', type: 'int' },
    });
    expect(selectList(map, '')).toBe('id, bytes_done::float8 AS "bytesDone", settings_version AS "settingsVersion"');
    // @ts-expect-error: a field the row lacks
    columnsOf<{ id: number }>()({ id: 'int', extra: 'int' });
  });

  it('turn the ranked rows’ JSON timestamps into Dates', () => {
    const row = fromJson(DOCUMENT_ROW, { id: 1, createdAt: '2026-01-02T03:04:05.000Z', title: 't' });
    expect(row).toEqual({ id: 1, createdAt: new Date('2026-01-02T03:04:05.000Z'), title: 't' });
  });
});
