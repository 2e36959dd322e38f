/**
 * The Python 3.11 documentation (Debian python3.11-doc, reST sources) as a corpus, and the Python
 * FAQ as questions: each FAQ heading that asks something is a question, and the documents and
 * sections its answer cross-references are its gold. FAQ documents are kept out of the corpus.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { IngestError } from '../ingest/errors';
import { extractLinks } from '../ingest/links';
import { prepareDocument } from '../ingest/prepare';
import { OBJECT_ROLES, parseRst, type RstTarget } from '../ingest/rst';
import type { DocumentInput, SectionInput } from '../ingest/types';
import { debianPackage } from './fetch';
import type { EvalDataset, EvalQuestion, GoldSection } from './types';

const SOURCES = 'usr/share/doc/python3.11/html/_sources';
export const docKey = (docName: string): string => `pydocs/${docName}`;

interface Place {
  document: string;
  path: string[];
}

/** Where each cross-reference target lives in the corpus. */
export class TargetIndex {
  readonly documents = new Set<string>();
  private readonly labels = new Map<string, Place>();
  private readonly modules = new Map<string, Place>();
  private readonly objects = new Map<string, Place>();

  add(docName: string, targets: RstTarget[]): void {
    const document = docKey(docName);
    this.documents.add(docName);
    for (const t of targets) {
      const map = t.kind === 'label' ? this.labels : t.kind === 'module' ? this.modules : this.objects;
      // The first definition wins, as Sphinx keeps the first and warns about duplicates.
      if (!map.has(t.name)) map.set(t.name, { document, path: t.sectionPath });
    }
  }

  /** A link target (`role:name`) → the place it points at, or null when it is outside the corpus. */
  resolve(target: string): Place | null {
    const colon = target.lastIndexOf(':');
    if (colon < 0 || /^https?:/.test(target)) return null;
    const role = target.slice(0, colon);
    const name = target.slice(colon + 1).trim();
    if (role === 'ref') return this.labels.get(name.toLowerCase()) ?? null;
    if (role === 'doc') return this.documents.has(name) ? { document: docKey(name), path: [] } : null;
    if (role === 'mod') return this.modules.get(name) ?? null;
    if (role === 'term') return this.documents.has('glossary') ? { document: docKey('glossary'), path: [] } : null;
    if (!OBJECT_ROLES.has(role)) return null;
    const bare = name.replace(/\(\)$/, '').replace(/^builtins\./, '');
    // A bare special method (`__init__`) is the one documented on `object` (reference/datamodel).
    const exact = this.objects.get(bare) ?? (/^__\w+__$/.test(bare) ? this.objects.get(`object.${bare}`) : undefined);
    if (exact) return exact;
    // `str.join` is documented as `str.join`, `copyfile` as `shutil.copyfile`: a unique suffix match.
    const suffix = `.${bare}`;
    const matches = [...this.objects.entries()].filter(([n]) => n.endsWith(suffix));
    const places = new Set(matches.map(([, p]) => `${p.document}\u0000${p.path.join('\u0000')}`));
    return places.size === 1 ? matches[0][1] : null;
  }
}

/**
 * Points each cross-reference in the corpus at the document that defines its target
 * (`[json](<mod:json>)` → `[json](<pydocs/library/json>)`), so ingest resolves it to that document
 * (links resolve by document key or title) and HLP can mine dual-link and co-mention pairs.
 * Targets outside the corpus keep their `role:name`. The anchor text, all that is embedded or
 * indexed, is unchanged.
 */
export function resolveCorpusLinks(text: string, index: TargetIndex): string {
  return text.replace(/\]\(<([^<>\n]+)>\)/g, (whole, target: string) => {
    const place = index.resolve(target);
    return place ? `](<${place.document}>)` : whole;
  });
}

function resolveSectionLinks(sections: SectionInput[], index: TargetIndex): SectionInput[] {
  return sections.map((s) => ({
    ...s,
    ...(s.text !== undefined ? { text: resolveCorpusLinks(s.text, index) } : {}),
    ...(s.sections ? { sections: resolveSectionLinks(s.sections, index) } : {}),
  }));
}

function listSources(root: string): string[] {
  const names: string[] = [];
  const walk = (dir: string): void => {
    for (const f of readdirSync(dir).sort()) {
      const p = path.join(dir, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.rst.txt')) names.push(path.relative(root, p).replace(/\.rst\.txt$/, ''));
    }
  };
  walk(root);
  return names;
}

/** Question sections (titles ending in "?"), each with all the text under it. */
function questionSections(sections: SectionInput[], parents: string[] = []): Array<{ title: string; path: string[]; text: string }> {
  const out: Array<{ title: string; path: string[]; text: string }> = [];
  const allText = (s: SectionInput): string => [s.text ?? '', ...(s.sections ?? []).map(allText)].join('\n\n');
  for (const s of sections) {
    const p = [...parents, s.title];
    if (s.title.trim().endsWith('?')) out.push({ title: s.title, path: p, text: allText(s) });
    else out.push(...questionSections(s.sections ?? [], p));
  }
  return out;
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** The corpus of the Python docs: every non-FAQ source that has text, links resolved to the corpus; the FAQ's sections and every document's targets beside it. */
export interface PydocsCorpus {
  sources: number;
  empty: number;
  documents: DocumentInput[];
  faqs: Array<{ name: string; sections: SectionInput[] }>;
  index: TargetIndex;
  /** Per corpus document (its key), the targets its source defines. */
  targets: Map<string, RstTarget[]>;
}

export function readPydocs(root: string): PydocsCorpus {
  const sourceDir = path.join(root, SOURCES);
  const names = listSources(sourceDir);
  const index = new TargetIndex();
  const documents: DocumentInput[] = [];
  const faqs: Array<{ name: string; sections: SectionInput[] }> = [];
  const targets = new Map<string, RstTarget[]>();
  let empty = 0;
  for (const name of names) {
    const parsed = parseRst(readFileSync(path.join(sourceDir, `${name}.rst.txt`), 'utf8'), { fallbackTitle: name, docName: name });
    if (name.startsWith('faq/')) {
      faqs.push({ name, sections: parsed.sections });
      continue;
    }
    const input: DocumentInput = {
      key: docKey(name),
      title: parsed.title,
      abstract: parsed.abstract,
      sections: parsed.sections,
      source: 'pydocs',
      metadata: { doc: name },
    };
    try {
      prepareDocument(input); // documents with no text at all (tables of contents) cannot be ingested
    } catch (e) {
      if (!(e instanceof IngestError)) throw e;
      empty++;
      continue;
    }
    documents.push(input);
    index.add(name, parsed.targets);
    targets.set(input.key!, parsed.targets);
  }
  // Only once every document's targets are known: a link may point forward.
  for (const d of documents) {
    if (d.abstract !== undefined) d.abstract = resolveCorpusLinks(d.abstract, index);
    if (d.sections) d.sections = resolveSectionLinks(d.sections, index);
  }
  return { sources: names.length, empty, documents, faqs, index, targets };
}

/** Build the data set from an extracted python3.11-doc (`root`), or fetch it into `cacheDir`. */
export function buildPydocs(cacheDir: string, root = debianPackage('python3.11-doc', cacheDir)): EvalDataset {
  const { sources, empty, documents, faqs, index } = readPydocs(root);
  const questions: EvalQuestion[] = [];
  let asked = 0;
  let links = 0;
  let resolvedLinks = 0;
  for (const faq of faqs) {
    for (const q of questionSections(faq.sections)) {
      asked++;
      const places: Place[] = [];
      for (const link of extractLinks(q.text).links) {
        links++;
        const place = index.resolve(link.target);
        if (place) {
          resolvedLinks++;
          places.push(place);
        }
      }
      if (places.length === 0) continue;
      const goldDocuments = [...new Set(places.map((p) => p.document))];
      const seen = new Set<string>();
      const goldSections: GoldSection[] = [];
      for (const p of places) {
        const id = `${p.document}\u0000${p.path.join('\u0000')}`;
        if (p.path.length > 0 && !seen.has(id)) {
          seen.add(id);
          goldSections.push({ document: p.document, path: p.path });
        }
      }
      questions.push({ id: `${faq.name}#${slug(q.title)}`, question: q.title, goldDocuments, goldSections });
    }
  }
  return {
    name: 'pydocs',
    description: 'Python 3.11 documentation (Debian python3.11-doc, reST sources; FAQ excluded) with the Python FAQ questions',
    documents,
    questions,
    stats: {
      sourceDocuments: sources,
      faqDocuments: faqs.length,
      emptyDocumentsSkipped: empty,
      corpusDocuments: documents.length,
      faqQuestions: asked,
      questionsWithResolvedGold: questions.length,
      questionsDropped: asked - questions.length,
      questionsWithGoldSection: questions.filter((q) => q.goldSections.length > 0).length,
      answerLinks: links,
      answerLinksResolved: resolvedLinks,
    },
    notes: [],
  };
}
