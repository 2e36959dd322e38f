import { useEffect, useState } from 'react';
import { gql } from './api';
import { href, type Route } from './route';

const DOCUMENT = `query($id: ID!) {
  document(id: $id) {
    id key title source abstract
    toc { id title depth titlePath parent { id } passages { id text } }
    outgoingLinks { id anchorText target targetDocument { id title } }
    incomingLinks { id anchorText sourceDocument { id title } }
  }
}`;
const PASSAGE = `query($id: ID!) { passage(id: $id) { id text titlePath section { id } previous { id } next { id } } }`;

interface Section {
  id: string;
  title: string;
  depth: number;
  titlePath: string[];
  parent: { id: string } | null;
  passages: { id: string; text: string }[];
}
interface Doc {
  id: string;
  key: string;
  title: string;
  source: string | null;
  abstract: string;
  toc: Section[];
  outgoingLinks: { id: string; anchorText: string; target: string; targetDocument: { id: string; title: string } | null }[];
  incomingLinks: { id: string; anchorText: string; sourceDocument: { id: string; title: string } }[];
}
interface PassageView {
  id: string;
  text: string;
  titlePath: string[];
  section: { id: string } | null;
  previous: { id: string } | null;
  next: { id: string } | null;
}

/** The table of contents as a tree: sections with children fold (details/summary work by keyboard). */
function Tree({ doc, parent, selected, link }: { doc: Doc; parent: string | null; selected?: string; link: (s: Section) => string }) {
  const children = doc.toc.filter((s) => (s.parent?.id ?? null) === parent);
  if (children.length === 0) return null;
  return (
    <ul className="tree" role={parent === null ? 'tree' : 'group'}>
      {children.map((s) => {
        const hasChildren = doc.toc.some((c) => c.parent?.id === s.id);
        const current = s.id === selected;
        const a = (
          <a href={link(s)} aria-current={current ? 'page' : undefined} className={current ? 'current' : undefined}>
            {s.title}
          </a>
        );
        return (
          <li key={s.id} role="treeitem" aria-selected={current}>
            {hasChildren ? (
              <details
                open={
                  current || doc.toc.some((c) => c.id === selected && c.titlePath.slice(0, s.titlePath.length).join('\u0000') === s.titlePath.join('\u0000'))
                }
              >
                <summary>{a}</summary>
                <Tree doc={doc} parent={s.id} selected={selected} link={link} />
              </details>
            ) : (
              a
            )}
          </li>
        );
      })}
    </ul>
  );
}

export function DocumentView({ route }: { route: Route }) {
  const id = route.id!;
  const passageId = route.params.get('passage') ?? undefined;
  const q = route.params.get('q') ?? undefined;
  const [doc, setDoc] = useState<Doc | null>(null);
  const [passage, setPassage] = useState<PassageView | null>(null);
  const [error, setError] = useState('');

  useEffect(() => {
    setError('');
    gql<{ document: Doc | null }>(DOCUMENT, { id }).then(
      (d) => (d.document ? setDoc(d.document) : setError(`document ${id} does not exist`)),
      (e: Error) => setError(e.message),
    );
  }, [id]);
  useEffect(() => {
    if (!passageId) return setPassage(null);
    gql<{ passage: PassageView | null }>(PASSAGE, { id: passageId }).then(
      (d) => setPassage(d.passage),
      (e: Error) => setError(e.message),
    );
  }, [passageId]);

  if (error)
    return (
      <p className="error" role="alert">
        {error}
      </p>
    );
  if (!doc) return <p aria-busy="true">Loading…</p>;
  const sectionId = route.params.get('section') ?? passage?.section?.id ?? undefined;
  const section = doc.toc.find((s) => s.id === sectionId);
  const at = (params: Record<string, string | undefined>) => href(`document/${doc.id}`, { ...params, q });

  return (
    <article className="document">
      <nav className="crumbs" aria-label="Breadcrumbs">
        {q && <a href={href('search', { q })}>← results for “{q}”</a>}
      </nav>
      <h2>
        <a href={at({})}>{doc.title}</a> <span className="muted">{doc.key}</span>
      </h2>
      <div className="document-layout">
        <nav className="toc" aria-label="Table of contents">
          <h3>Contents</h3>
          <Tree doc={doc} parent={null} selected={section?.id} link={(s) => at({ section: s.id })} />
        </nav>
        <div className="document-main">
          {passage && (
            <section className="passage-view" aria-label="Passage">
              <p className="title-path">{passage.titlePath.join(' › ')}</p>
              <p className="passage-text selected">{passage.text}</p>
              <p className="pager">
                {passage.previous ? (
                  <a href={at({ passage: passage.previous.id })} rel="prev">
                    ← previous passage
                  </a>
                ) : (
                  <span className="muted">first passage</span>
                )}
                {passage.next ? (
                  <a href={at({ passage: passage.next.id })} rel="next">
                    next passage →
                  </a>
                ) : (
                  <span className="muted">last passage</span>
                )}
              </p>
            </section>
          )}
          {section ? (
            <section aria-label="Section">
              <h3 className="section-title">{section.titlePath.join(' › ')}</h3>
              {section.passages.length === 0 && <p className="muted">No text of its own: see its subsections.</p>}
              <ol className="section-passages">
                {section.passages.map((x) => (
                  <li key={x.id} className={x.id === passage?.id ? 'selected' : undefined}>
                    <a href={at({ passage: x.id })}>{x.text}</a>
                  </li>
                ))}
              </ol>
              {(() => {
                const i = doc.toc.indexOf(section);
                const prev = doc.toc[i - 1];
                const next = doc.toc[i + 1];
                return (
                  <p className="pager">
                    {prev ? <a href={at({ section: prev.id })}>← {prev.title}</a> : <span />}
                    {next ? <a href={at({ section: next.id })}>{next.title} →</a> : <span />}
                  </p>
                );
              })()}
            </section>
          ) : (
            !passage && <p className="abstract">{doc.abstract || <span className="muted">No abstract.</span>}</p>
          )}
          <section className="links" aria-label="Links">
            <h3>Links out ({doc.outgoingLinks.length})</h3>
            <ul>
              {doc.outgoingLinks.map((l) => (
                <li key={l.id}>
                  {l.targetDocument ? (
                    <a href={href(`document/${l.targetDocument.id}`)}>{l.anchorText || l.targetDocument.title}</a>
                  ) : (
                    <span>
                      {l.anchorText} <span className="muted">({l.target}, not in the store)</span>
                    </span>
                  )}
                </li>
              ))}
            </ul>
            <h3>Links in ({doc.incomingLinks.length})</h3>
            <ul>
              {doc.incomingLinks.map((l) => (
                <li key={l.id}>
                  <a href={href(`document/${l.sourceDocument.id}`)}>{l.sourceDocument.title}</a> <span className="muted">“{l.anchorText}”</span>
                </li>
              ))}
            </ul>
          </section>
        </div>
      </div>
    </article>
  );
}
