import type { RetrieveOptions } from '../retrieval/retrieve';
import { corpusSettingsOf } from '../retrieval/settings';
import { currentSettings } from '../store/retrieval-settings';
import type { Context } from './context';

/**
 * What a question asked through the server is answered with besides its arguments: the server's
 * HNSW and BM25 settings, the corpus's retrieval settings (cached per process where the server
 * keeps them) and the environment's ranking layer. The GraphQL resolver and the MCP tools ask the
 * same way.
 */
export async function serverRetrieveOptions(ctx: Context): Promise<RetrieveOptions> {
  const corpus = await (ctx.settings?.get() ?? currentSettings(ctx.db).then(corpusSettingsOf));
  return {
    efSearch: ctx.config.efSearch,
    efFactor: ctx.config.efFactor,
    iterativeScan: ctx.config.iterativeScan,
    maxScanTuples: ctx.config.maxScanTuples,
    bm25: ctx.config.bm25,
    corpus,
    environment: ctx.config.ranking,
  };
}
