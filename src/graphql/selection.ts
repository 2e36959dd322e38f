/**
 * What a `retrieve` selection reads of the ranked passages and documents, as the columns the
 * search statement should return with the ranking (retrieval/statements/rows.ts). Fragments and
 * aliases are followed; @skip/@include count as selected (fetching a column too many is harmless).
 * A field this map does not know reads every column of its type, so a new field is never starved.
 */
import type { FieldNode, FragmentDefinitionNode, GraphQLResolveInfo, SelectionSetNode } from 'graphql';
import { DOCUMENT_FIELDS, PASSAGE_FIELDS, type DocumentField, type PassageField, type RowFetch } from '../retrieval/statements/rows';

type Fragments = Record<string, FragmentDefinitionNode>;

/** Every field selected in these sets (fragments expanded), by name, with its sub-selections. */
function fieldsOf(sets: readonly (SelectionSetNode | undefined)[], fragments: Fragments): Map<string, SelectionSetNode[]> {
  const out = new Map<string, SelectionSetNode[]>();
  const visit = (set: SelectionSetNode | undefined, seen: Set<string>) => {
    for (const s of set?.selections ?? []) {
      if (s.kind === 'Field') {
        const subs = out.get(s.name.value) ?? [];
        if (s.selectionSet) subs.push(s.selectionSet);
        out.set(s.name.value, subs);
      } else if (s.kind === 'InlineFragment') {
        visit(s.selectionSet, seen);
      } else if (!seen.has(s.name.value)) {
        seen.add(s.name.value);
        visit(fragments[s.name.value]?.selectionSet, seen);
      }
    }
  };
  for (const set of sets) visit(set, new Set());
  return out;
}

/**
 * Passage fields other than a column's own (which reads that column) → the columns they read;
 * ScoredPassage.answer reads text.
 */
const PASSAGE_NEEDS: Record<string, readonly PassageField[]> = {
  databaseId: ['id'],
  document: ['documentId'],
  section: ['sectionId'],
  previous: ['documentId', 'ordinal'],
  next: ['documentId', 'ordinal'],
};

/** Document relations read only the id; scalars read their column. */
const DOCUMENT_RELATIONS = new Set(['sections', 'toc', 'passageCount', 'passages', 'outgoingLinks', 'incomingLinks']);

const ALL_PASSAGE = Object.keys(PASSAGE_FIELDS) as PassageField[];
const ALL_DOCUMENT = Object.keys(DOCUMENT_FIELDS) as DocumentField[];

function passageColumns(fields: Iterable<string>): PassageField[] {
  const columns = new Set<PassageField>(['id', 'documentId']);
  for (const f of fields) {
    if (f === '__typename') continue;
    for (const c of PASSAGE_NEEDS[f] ?? (Object.hasOwn(PASSAGE_FIELDS, f) ? [f as PassageField] : ALL_PASSAGE)) columns.add(c);
  }
  return [...columns];
}

function documentColumns(fields: Iterable<string>): DocumentField[] {
  const columns = new Set<DocumentField>(['id']);
  for (const f of fields) {
    if (f === '__typename' || f === 'databaseId' || DOCUMENT_RELATIONS.has(f)) continue; // the id is always read
    if (f in DOCUMENT_FIELDS) columns.add(f as DocumentField);
    else for (const c of ALL_DOCUMENT) columns.add(c);
  }
  return [...columns];
}

/** The columns `retrieve`'s selection (this field's node in info) reads of the ranked rows. */
export function retrieveRowFetch(info: Pick<GraphQLResolveInfo, 'fieldNodes' | 'fragments'>): RowFetch {
  const f = info.fragments;
  const top = fieldsOf(
    info.fieldNodes.map((n: FieldNode) => n.selectionSet),
    f,
  );
  const scoredPassage = fieldsOf(top.get('passages') ?? [], f);
  const scoredDocument = fieldsOf(top.get('documents') ?? [], f);
  const fetch: RowFetch = {};
  const passage = scoredPassage.has('passage') ? fieldsOf(scoredPassage.get('passage')!, f) : undefined;
  if (passage || scoredPassage.has('answer')) {
    fetch.passages = passageColumns([...(passage?.keys() ?? []), ...(scoredPassage.has('answer') ? ['text'] : [])]);
  }
  const documentFields: string[] = [];
  if (scoredDocument.has('document')) documentFields.push(...fieldsOf(scoredDocument.get('document')!, f).keys());
  if (passage?.has('document')) {
    fetch.ofPassages = true;
    documentFields.push(...fieldsOf(passage.get('document')!, f).keys());
  }
  if (scoredDocument.has('document') || fetch.ofPassages) fetch.documents = documentColumns(documentFields);
  if (fetch.ofPassages && !scoredDocument.has('document')) fetch.ofDocuments = false;
  return fetch;
}
