/** The context blocks a frontend would send its model (Retrieval.context), as they would be sent. */

export interface ContextBlock {
  rank: number;
  score: number;
  tokens: number;
  titlePath: string[];
  text: string;
  passageIds: string[];
  documentId: string;
}
export interface Context {
  blocks: ContextBlock[];
  tokens: number;
  budget: number;
  truncated: number;
  tokenizer: string;
}

export const CONTEXT_FIELDS = 'tokens budget truncated tokenizer blocks { rank score tokens titlePath text passageIds documentId }';

export const EXPANSIONS = ['NONE', 'WINDOW', 'SECTION'] as const;

export function ContextView({ context }: { context: Context }) {
  return (
    <section className="context" aria-labelledby="context-title">
      <h3 id="context-title">Context</h3>
      <p className="summary">
        {context.blocks.length} blocks · {context.tokens} of {context.budget} tokens ({context.tokenizer})
        {context.truncated > 0 ? ` · ${context.truncated} ranked passages did not fit` : ''}
      </p>
      <ol className="context-blocks">
        {context.blocks.map((b) => (
          <li key={b.passageIds[0]}>
            <p className="title-path">
              {b.titlePath.join(' › ')}{' '}
              <span className="muted">
                rank {b.rank} · {b.passageIds.length} passages · {b.tokens} tokens
              </span>
            </p>
            <pre className="context-text">{b.text}</pre>
          </li>
        ))}
      </ol>
    </section>
  );
}
