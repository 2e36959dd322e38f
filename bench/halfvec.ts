/**
 * npm run bench:halfvec — would storing vectors as halfvec (16-bit) change what DHR retrieves?
 * On an embedded corpus (run `dhr serve --demo` or `dhr embed` first), for sampled stored passage
 * and document vectors used as queries, compares the exact top-20 by inner product over `vector`
 * (the baseline, same run) with the exact top-20 over `halfvec`: overlap@20 and the largest score
 * difference; and the bytes each form takes. Uses DATABASE_URL, else the embedded database in DATA_DIR.
 *   BENCH_QUERIES (100)  BENCH_MODEL (use-lite)
 */
import 'reflect-metadata';
import { loadConfig } from '../src/config';
import { modelByName } from '../src/store/embeddings';
import { openMigratedDatabase } from '../src/store/open';

const queries = Number(process.env.BENCH_QUERIES ?? 100);
const modelName = process.env.BENCH_MODEL ?? 'use-lite';

async function main() {
  const db = await openMigratedDatabase(loadConfig());
  try {
    const model = await modelByName(db, modelName);
    if (!model) throw new Error(`no model "${modelName}": embed a corpus first`);
    const dim = Number(model.dimension);
    for (const level of ['passage', 'document'] as const) {
      const table = `${level}_embeddings`;
      const idColumn = `${level}_id`;
      const [{ n }] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE model_id = $1`, [model.id]);
      // Deterministic sample: every k-th vector by id.
      const sample = await db.query<{ embedding: string }>(
        `SELECT embedding::text AS embedding FROM (
           SELECT embedding, row_number() OVER (ORDER BY ${idColumn}) AS r FROM ${table} WHERE model_id = $1) s
         WHERE r % GREATEST(1, $2::int / $3::int) = 0 LIMIT $3`,
        [model.id, n, queries],
      );
      let overlap = 0;
      let tieAware = 0;
      let maxDiff = 0;
      for (const { embedding } of sample) {
        const full = await db.query<{ id: number; score: number }>(
          `SELECT ${idColumn} AS id, -(embedding::vector(${dim}) <#> $2::vector(${dim})) AS score FROM ${table}
           WHERE model_id = $1 ORDER BY embedding::vector(${dim}) <#> $2::vector(${dim}) LIMIT 20`,
          [model.id, embedding],
        );
        const half = await db.query<{ id: number; score: number; exact: number }>(
          `SELECT ${idColumn} AS id, -(embedding::halfvec(${dim}) <#> $2::halfvec(${dim})) AS score,
                  -(embedding::vector(${dim}) <#> $3::vector(${dim})) AS exact FROM ${table}
           WHERE model_id = $1 ORDER BY embedding::halfvec(${dim}) <#> $2::halfvec(${dim}) LIMIT 20`,
          // The query goes in twice: one parameter would take the halfvec type and round the exact score too.
          [model.id, embedding, embedding],
        );
        const ids = new Set(full.map((r) => r.id));
        overlap += half.filter((r) => ids.has(r.id)).length / full.length;
        // Near-duplicate texts tie; an item as good as the exact 20th counts as a correct answer.
        const threshold = full[full.length - 1].score - 1e-6;
        tieAware += half.filter((r) => r.exact >= threshold).length / full.length;
        for (const r of half) maxDiff = Math.max(maxDiff, Math.abs(r.score - r.exact));
      }
      const [size] = await db.query<{ vector: number; halfvec: number }>(
        `SELECT avg(pg_column_size(embedding::vector(${dim})))::int AS vector, avg(pg_column_size(embedding::halfvec(${dim})))::int AS halfvec
         FROM (SELECT embedding FROM ${table} WHERE model_id = $1 LIMIT 1000) s`,
        [model.id],
      );
      console.log(
        `${level}s: ${n} vectors, ${sample.length} queries | overlap@20 halfvec vs vector: ${(overlap / sample.length).toFixed(4)}, ` +
          `counting ties: ${(tieAware / sample.length).toFixed(4)} | max |halfvec - vector score| of an item: ${maxDiff.toExponential(2)} | ` +
          `bytes per vector: vector ${size.vector}, halfvec ${size.halfvec}`,
      );
    }
  } finally {
    await db.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
