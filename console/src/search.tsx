import { RETRIEVE_DEFAULTS } from '../../src/retrieval/defaults';
import { useEffect, useState, type FormEvent } from 'react';
import { gql } from './api';
import { CONTEXT_FIELDS, ContextView, EXPANSIONS, type Context } from './context';
import { href, type Route } from './route';

const RETRIEVE = `query($q: String!, $mode: RetrievalMode, $k1: Int, $k2: Int, $lambda: Float, $alpha: Float, $perDocument: Int, $perDocumentDecay: Float,
    $withContext: Boolean! = false, $tokens: Int = 1, $expand: ContextExpand) {
  retrieve(question: $q, mode: $mode, k1: $k1, k2: $k2, lambda: $lambda, alpha: $alpha, perDocument: $perDocument, perDocumentDecay: $perDocumentDecay) {
    mode k1 k2 lambda alpha perDocument model warnings
    context(tokens: $tokens, expand: $expand) @include(if: $withContext) { ${CONTEXT_FIELDS} }
    parameters { name value source }
    coverage { documents { total embedded indexed } passages { total embedded indexed } }
    timings { totalMs }
    passages {
      rank score passageScore documentScore denseScore lexicalScore documentDenseScore documentLexicalScore
      answer { text start end score sentence { start end } }
      passage { id text titlePath document { id title } }
    }
  }
}`;
const MODES = `{ __type(name: "RetrievalMode") { enumValues { name description } } }`;

interface Span {
  text: string;
  start: number;
  end: number;
}
interface Scored {
  rank: number;
  score: number;
  passageScore: number | null;
  documentScore: number | null;
  denseScore: number | null;
  lexicalScore: number | null;
  documentDenseScore: number | null;
  documentLexicalScore: number | null;
  answer: (Span & { score: number; sentence: { start: number; end: number } }) | null;
  passage: { id: string; text: string; titlePath: string[]; document: { id: string; title: string } };
}
interface Level {
  total: number;
  embedded: number;
  indexed: number;
}
interface Result {
  mode: string;
  k1: number;
  k2: number;
  lambda: number;
  alpha: number;
  perDocument: number | null;
  /** Every ranking parameter as applied, and where its value came from (request, corpus settings, environment, mode). */
  parameters: { name: string; value: unknown; source: string }[];
  model: string;
  warnings: string[];
  coverage: { documents: Level; passages: Level };
  timings: { totalMs: number };
  passages: Scored[];
  context?: Context;
}

/** The score parts drawn as bars: the two parts the ranking adds, then the raw signals they came from. */
const PARTS: [keyof Scored, string][] = [
  ['passageScore', 'passage'],
  ['documentScore', 'document'],
  ['denseScore', 'passage dense'],
  ['lexicalScore', 'passage BM25'],
  ['documentDenseScore', 'document dense'],
  ['documentLexicalScore', 'document BM25'],
];

/** The passage with its answer sentence marked and the answer span inside it in bold. */
export function Highlighted({ text, answer }: { text: string; answer: Scored['answer'] }) {
  if (!answer) return <p className="passage-text">{text}</p>;
  const { sentence } = answer;
  return (
    <p className="passage-text">
      {text.slice(0, sentence.start)}
      <mark className="answer-sentence">
        {text.slice(sentence.start, answer.start)}
        <strong className="answer-span">{text.slice(answer.start, answer.end)}</strong>
        {text.slice(answer.end, sentence.end)}
      </mark>
      {text.slice(sentence.end)}
    </p>
  );
}

function Bars({ p, max }: { p: Scored; max: Record<string, number> }) {
  return (
    <dl className="bars">
      {PARTS.filter(([k]) => p[k] !== null).map(([k, label]) => {
        const v = p[k] as number;
        const width = max[k] > 0 ? Math.max(0, Math.min(1, v / max[k])) : 0;
        return (
          <div className="bar" key={k}>
            <dt>{label}</dt>
            <dd>
              <span className="bar-track" aria-hidden="true">
                <span className="bar-fill" style={{ width: `${(width * 100).toFixed(1)}%` }} />
              </span>
              <span className="bar-value">{v.toFixed(3)}</span>
            </dd>
          </div>
        );
      })}
    </dl>
  );
}

export function SearchView({ route }: { route: Route }) {
  const p = route.params;
  const [form, setForm] = useState({
    q: p.get('q') ?? '',
    mode: p.get('mode') ?? '',
    k1: p.get('k1') ?? String(RETRIEVE_DEFAULTS.k1),
    k2: p.get('k2') ?? String(RETRIEVE_DEFAULTS.k2),
    lambda: p.get('lambda') ?? '',
    alpha: p.get('alpha') ?? '',
    perDocument: p.get('perDocument') ?? '',
    perDocumentDecay: p.get('perDocumentDecay') ?? '',
    context: p.get('context') ?? '',
    expand: p.get('expand') ?? '',
  });
  const [modes, setModes] = useState<{ name: string; description: string }[]>([]);
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    gql(MODES).then(
      (d) => setModes(d.__type.enumValues),
      (e: Error) => setError(e.message),
    );
  }, []);

  // The URL is the search: running one is navigating to it, so Back and shared links work.
  const key = p.toString();
  useEffect(() => {
    const q = p.get('q');
    if (!q) return;
    const num = (name: string) => (p.get(name) ? Number(p.get(name)) : undefined);
    setBusy(true);
    setError('');
    gql<{ retrieve: Result }>(RETRIEVE, {
      q,
      mode: p.get('mode') || undefined,
      k1: num('k1'),
      k2: num('k2'),
      lambda: num('lambda'),
      alpha: num('alpha'),
      perDocument: num('perDocument'),
      perDocumentDecay: num('perDocumentDecay'),
      ...(p.get('context') ? { withContext: true, tokens: num('context'), expand: p.get('expand') || undefined } : {}),
    })
      .then(
        (d) => setResult(d.retrieve),
        (e: Error) => (setError(e.message), setResult(null)),
      )
      .finally(() => setBusy(false));
  }, [key]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    location.hash = href('search', form);
  };
  const set = (name: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [name]: e.target.value });

  const max: Record<string, number> = {};
  for (const [k] of PARTS) max[k] = Math.max(0, ...(result?.passages ?? []).map((x) => (x[k] as number | null) ?? 0));

  return (
    <section aria-labelledby="search-title">
      <h2 id="search-title" className="visually-hidden">
        Search
      </h2>
      <form className="search" onSubmit={submit} role="search">
        <label className="question">
          <span>Question</span>
          <input name="q" type="search" value={form.q} onChange={set('q')} placeholder="What is the capital of Norway?" required maxLength={2000} autoFocus />
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Searching…' : 'Search'}
        </button>
        <fieldset className="controls">
          <legend>Ranking</legend>
          <label>
            <span>mode</span>
            <select name="mode" value={form.mode} onChange={set('mode')}>
              <option value="">default (HYBRID_HIERARCHICAL)</option>
              {modes.map((m) => (
                <option key={m.name} value={m.name} title={m.description}>
                  {m.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>k1 (documents)</span>
            <input name="k1" type="number" min={1} max={1000} value={form.k1} onChange={set('k1')} />
          </label>
          <label>
            <span>k2 (passages)</span>
            <input name="k2" type="number" min={1} max={1000} value={form.k2} onChange={set('k2')} />
          </label>
          <label>
            <span>λ (document weight)</span>
            <input
              name="lambda"
              type="number"
              min={0}
              max={10}
              step="any"
              value={form.lambda}
              onChange={set('lambda')}
              placeholder={result ? String(result.lambda) : 'mode default'}
            />
          </label>
          <label>
            <span>alpha (dense weight)</span>
            <input
              name="alpha"
              type="number"
              min={0}
              max={1}
              step="any"
              value={form.alpha}
              onChange={set('alpha')}
              placeholder={result ? String(result.alpha) : 'mode default'}
            />
          </label>
          <label>
            <span>passages per document (at most)</span>
            <input
              name="perDocument"
              type="number"
              min={1}
              max={1000}
              value={form.perDocument}
              onChange={set('perDocument')}
              placeholder={result ? String(result.perDocument ?? 'no bound') : 'mode default'}
            />
          </label>
          <label>
            <span>decay per further passage of a document</span>
            <input
              name="perDocumentDecay"
              type="number"
              min={0}
              max={1}
              step="any"
              value={form.perDocumentDecay}
              onChange={set('perDocumentDecay')}
              placeholder={result ? String(result.parameters.find((x) => x.name === 'perDocumentDecay')?.value ?? 0) : 'mode default'}
            />
          </label>
        </fieldset>
        <fieldset className="controls">
          <legend>Context for a model</legend>
          <label>
            <span>token budget (empty: none)</span>
            <input name="context" type="number" min={1} max={100000} value={form.context} onChange={set('context')} placeholder="e.g. 1500" />
          </label>
          <label>
            <span>expand</span>
            <select name="expand" value={form.expand} onChange={set('expand')}>
              <option value="">NONE</option>
              {EXPANSIONS.filter((x) => x !== 'NONE').map((x) => (
                <option key={x} value={x}>
                  {x}
                </option>
              ))}
            </select>
          </label>
        </fieldset>
      </form>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {result && (
        <div className="result" aria-live="polite">
          <p className="summary">
            {result.passages.length} passages · {result.mode} · k1 {result.k1} · k2 {result.k2} · λ {result.lambda} · alpha {result.alpha}
            {result.perDocument !== null ? ` · ≤ ${result.perDocument} per document` : ''} · {result.model} · {result.timings.totalMs.toFixed(0)} ms
          </p>
          <p
            className="parameters"
            title="where each ranking parameter came from: the question (request), the corpus's settings, the server's environment, or the mode's default"
          >
            parameters: {result.parameters.map((p) => `${p.name} ${p.value === null ? 'none' : String(p.value)} (${p.source})`).join(' · ')}
          </p>
          <p className="coverage">
            coverage: documents {result.coverage.documents.embedded}/{result.coverage.documents.total} embedded, {result.coverage.documents.indexed} indexed;
            passages {result.coverage.passages.embedded}/{result.coverage.passages.total} embedded, {result.coverage.passages.indexed} indexed
          </p>
          {result.warnings.length > 0 && (
            <ul className="warnings">
              {result.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
          {result.context && <ContextView context={result.context} />}
          <ol className="passages">
            {result.passages.map((x) => (
              <li key={x.passage.id} className="scored">
                <a className="title-path" href={href(`document/${x.passage.document.id}`, { passage: x.passage.id, q: p.get('q') ?? '' })}>
                  {x.passage.titlePath.join(' › ')}
                </a>
                <span className="score" title="what the ranking sorts by">
                  score {x.score.toFixed(3)}
                </span>
                <Highlighted text={x.passage.text} answer={x.answer} />
                {x.answer && (
                  <p className="answer">
                    answer: <strong>{x.answer.text}</strong> <span className="muted">({x.answer.score.toFixed(2)})</span>
                  </p>
                )}
                <Bars p={x} max={max} />
              </li>
            ))}
          </ol>
        </div>
      )}
    </section>
  );
}
