import type { Config } from '../config';
import { IngestError } from '../ingest/errors';
import { readInputFiles } from '../ingest/files';
import type { DocumentInput } from '../ingest/types';
import { ingest } from '../pipeline/ingest';
import type { EmbeddingTargets } from '../pipeline/embed';
import type { ModelRegistry } from '../pipeline/jobs/registry';
import { externalLevels } from '../pipeline/supplied-vectors';
import { openMigratedDatabase } from '../store/open';
import { describeEmbed, embedProgress, loadEmbedding } from './embed';
import { crashPoint } from './crash';
import { ProgressBar } from './progress';

/** `dhr ingest <paths…>` on the store (cli/ingest-command.ts chooses): exit code 2 when some documents failed. */
export async function ingestFiles(config: Config, paths: string[], options: { source?: string; embed: boolean; batchPassages?: number }): Promise<number> {
  const db = await openMigratedDatabase(config);
  let models: ModelRegistry | undefined;
  let targets: EmbeddingTargets | undefined;
  try {
    // Read everything first so the bar knows its total.
    const items: { origin: string; item: DocumentInput | IngestError }[] = [];
    for await (const { origin, input, error } of readInputFiles(paths, config.ingest)) {
      const item = error ?? input;
      if (!item) continue;
      if (!(item instanceof IngestError) && options.source && !item.source) item.source = options.source;
      items.push({ origin, item });
    }
    const crash = crashPoint(process.env.DHR_TEST_CRASH_AFTER);
    const bar = new ProgressBar(items.length, 'ingest');
    const embedBar = embedProgress();
    let passages = 0;
    const embedding = config.embedOnIngest && options.embed;
    const result = await ingest(
      db,
      items.map((i) => i.item),
      {
        ...config.ingest,
        labelOf: (i) => items[i].origin,
        embedBatchSize: config.embedBatchSize,
        // 16 documents or more (a directory, a JSONL file) take the bulk path: batches of documents
        // per transaction, BM25 built once a batch (pipeline/bulk-ingest.ts).
        batchPassages: options.batchPassages,
        // A large load into an empty store indexes its postings once at the end (store/deferred-indexes.ts).
        deferIndexesFrom: config.bulkDeferIndexesFrom,
        // Whatever an earlier, interrupted run left pending is finished too, whichever files it read.
        finishAll: true,
        // When embedding, passages are split to the active passage model's token budget (with
        // --no-embed no model is loaded or registered: words only, and a later ingest that embeds
        // re-splits, since the budget is part of the content hash).
        splitFor: embedding
          ? async () => {
              ({ models, targets } = await loadEmbedding(db, config));
              return targets.encoders.byRole.passage;
            }
          : undefined,
        // JSON documents may bring their own vectors for the active external models (docs/models.md#bring-your-own-vectors).
        vectorsFor: embedding ? async () => externalLevels(targets) : undefined,
        embedWith: embedding ? async (pending) => (pending.length === 0 ? undefined : targets) : undefined,
        onEvent: (event) => {
          crash(event);
          if (event.stage === 'write') {
            passages += event.outcome.passages;
            bar.tick(`${passages} passages`);
            if (event.done === event.total) bar.finish();
          } else if (event.stage === 'embed') {
            embedBar.update(event);
          }
        },
      },
    );
    embedBar.finish();
    if (result.embedded && targets) console.log(describeEmbed(result.embedded, targets));
    for (const o of result.outcomes.filter((o) => o.status === 'failed')) console.error(`failed: ${o.message}`);
    for (const o of result.outcomes) for (const w of o.warnings) console.error(`warning: ${o.key ?? `#${o.index}`}: ${w}`);
    console.log(
      `ingested ${result.outcomes.length} documents: ${result.created} created, ${result.updated} updated, ` +
        `${result.unchanged} unchanged, ${result.failed} failed; ${result.passages} passages written`,
    );
    if (result.resumed > 0) console.log(`finished ${result.resumed} unchanged documents that an interrupted run had left unindexed or unembedded`);
    if (result.indexed > 0) console.log(`full-text index: ${result.indexed} passages`);
    return result.failed > 0 ? 2 : 0;
  } finally {
    await models?.close();
    await db.close();
  }
}
