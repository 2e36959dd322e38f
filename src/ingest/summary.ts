/**
 * The texts DHR embeds. Document encoder input (DHR Sec. 3): d = T_d [SEP] W_ab [SEP] T_table,
 * the title, the abstract and the table of contents linearized in pre-order, with a comma as
 * separator (the paper's best variant). Passage encoder input: the passage prefixed by its title
 * path, so a passage keeps the context of the document and sections it sits in.
 */

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();

/** "title, abstract, toc": empty parts are left out, so no ", ," appears. */
export function documentSummary(title: string, abstract: string, sectionTitlesPreOrder: string[]): string {
  const toc = sectionTitlesPreOrder.map(squash).filter(Boolean).join(', ');
  return [squash(title), squash(abstract), toc].filter(Boolean).join(', ');
}

/** "Doc, Section, Subsection, passage text". */
export function passageEncodingText(p: { titlePath: string[]; text: string }): string {
  return `${p.titlePath.join(', ')}, ${p.text}`;
}
