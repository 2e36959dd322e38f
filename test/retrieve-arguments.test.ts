import { buildGraphQLSchema } from '../src/graphql/schema';
import { RANKING, RANKING_NAMES } from '../src/retrieval/parameters';
import { REQUEST_ARGUMENT_NAMES, REQUEST_ARGUMENTS } from '../src/retrieval/request-parameters';

/**
 * retrieve's arguments are its two tables: the request arguments (retrieval/request-parameters.ts)
 * and the ranking parameters a question may set (retrieval/parameters.ts, `request`), each with the
 * table's description and default; besides them only the question's own fields and filter.
 */
describe("retrieve's arguments", () => {
  it('are generated from the tables, with their descriptions and defaults', async () => {
    const schema = await buildGraphQLSchema();
    const args = new Map(
      schema
        .getQueryType()!
        .getFields()
        .retrieve.args.map((a) => [a.name, a]),
    );
    for (const name of REQUEST_ARGUMENT_NAMES) {
      const spec = REQUEST_ARGUMENTS[name];
      expect(args.get(name)?.description).toBe(spec.description);
      expect(args.get(name)?.defaultValue).toBe('default' in spec ? spec.default : undefined);
    }
    const ranking = RANKING_NAMES.filter((n) => RANKING[n].request);
    for (const name of ranking) expect(args.get(name)?.description).toContain(RANKING[name].description);
    // a parameter the table keeps from questions is no argument
    for (const name of RANKING_NAMES.filter((n) => !RANKING[n].request)) expect(args.has(name)).toBe(false);
    const others = [...args.keys()].filter((n) => !(REQUEST_ARGUMENT_NAMES as string[]).includes(n) && !(ranking as string[]).includes(n));
    expect(others.sort()).toEqual(['filter', 'question', 'questionDocumentVector', 'questionPassageVector', 'questionVector']);
  });
});
