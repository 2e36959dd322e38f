import { z } from 'zod';
import { toGlobalId } from '../graphql/ids';
import type { DocumentRow, PassageRow, SectionRow } from '../store/rows';

/**
 * What the tools share: the id argument and the shapes rows are answered in. Ids are the GraphQL
 * API's global ids, so an agent can hand one to either API.
 */
export const idArgument = (what: string) =>
  z.union([z.string().min(1).max(100), z.number().int().positive()]).describe(`the ${what}'s id (as tools return it; its integer databaseId also works)`);

export const documentRef = (d: Pick<DocumentRow, 'id' | 'key' | 'title'>) => ({ id: toGlobalId('Document', d.id), key: d.key, title: d.title });

export const sectionRef = (s: Pick<SectionRow, 'id' | 'title'>) => ({ id: toGlobalId('Section', s.id), title: s.title });

export const passageOf = (p: PassageRow) => ({
  id: toGlobalId('Passage', p.id),
  ordinal: p.ordinal,
  sectionId: p.sectionId === null ? null : toGlobalId('Section', p.sectionId),
  titlePath: p.titlePath,
  text: p.text,
});
