import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GraphQLEnumType } from 'graphql';
import { buildGraphQLSchema } from '../src/graphql/schema';
import { packageRoot } from '../src/paths';
import { DEFAULT_MODE, MODES, RETRIEVAL_MODES } from '../src/retrieval/modes';
import { searchStatement } from '../src/retrieval/sql';

/**
 * The table of modes is the one place a mode is defined: the GraphQL enum, the mode table
 * of docs/retrieval.md, the evaluation's reports and the statement builders all follow it.
 */
describe('the table of retrieval modes', () => {
  it('is the GraphQL enum, with the same descriptions', async () => {
    const schema = await buildGraphQLSchema();
    const type = schema.getType('RetrievalMode');
    expect(type).toBeInstanceOf(GraphQLEnumType);
    const values = (type as GraphQLEnumType).getValues();
    expect(values.map((v) => v.name)).toEqual(RETRIEVAL_MODES);
    for (const v of values) expect(v.description).toBe(MODES[v.name as keyof typeof MODES].description);
    const retrieve = schema.getQueryType()!.getFields().retrieve;
    expect(retrieve.args.find((a) => a.name === 'mode')!.description).toContain(DEFAULT_MODE);
  });

  it("is docs/retrieval.md's mode table, row for row", () => {
    const readme = readFileSync(join(packageRoot(), 'docs', 'retrieval.md'), 'utf8');
    const from = readme.indexOf('## Modes\n');
    expect(from).toBeGreaterThan(0);
    const section = readme.slice(from, readme.indexOf('\n## ', from + 1));
    const rows = [...section.matchAll(/^\| `([A-Z_]+)`( \(default\))? \| (.+) \|$/gm)];
    expect(rows.map((r) => r[1])).toEqual(RETRIEVAL_MODES);
    expect(rows.filter((r) => r[2]).map((r) => r[1])).toEqual([DEFAULT_MODE]);
  });

  it('is what the committed evaluation reports ran', () => {
    for (const dataset of ['pydocs', 'factbook']) {
      const report = JSON.parse(readFileSync(join(packageRoot(), 'docs', 'eval', `${dataset}.json`), 'utf8'));
      expect(Object.keys(report.modes)).toEqual(RETRIEVAL_MODES);
    }
  });

  it('builds one statement per mode, asking only for the question vectors the mode needs', () => {
    const model = { id: 1, dimension: 3 };
    for (const mode of RETRIEVAL_MODES) {
      const { needs } = MODES[mode];
      const statement = searchStatement({
        mode,
        documentModel: model,
        passageModel: model,
        questionForDocuments: needs.documentVector ? Float32Array.of(1, 0, 0) : undefined,
        questionForPassages: needs.passageVector ? Float32Array.of(0, 1, 0) : undefined,
        questionText: needs.text ? 'capital' : undefined,
        k1: 10,
        k2: 5,
        lambda: 1,
      });
      expect(statement.sql.trim().startsWith('WITH')).toBe(true);
      expect(statement.sql.includes('qterms')).toBe(needs.text);
      // a mode that reads no question vector never builds an ANN stage, so sets no ef_search
      expect('hnsw.ef_search' in statement.settings).toBe(needs.documentVector || needs.passageVector);
    }
  });
});
