/**
 * Headed chunks → title tree, for the formats whose headings carry a level (Markdown, HTML): the
 * text before the first heading, then each heading with the blocks under it.
 */
import type { SectionInput } from './types';

export interface HeadedChunk {
  /** null for the text before the first heading. */
  heading: { level: number; text: string } | null;
  paragraphs: string[];
}

/** The heading that is the document title: the first heading, level 1, and the only level 1. */
export function titleHeading<C extends HeadedChunk>(chunks: C[]): C | null {
  const headed = chunks.filter((c) => c.heading);
  const first = headed[0];
  if (!first || first.heading!.level !== 1) return null;
  return headed.filter((c) => c.heading!.level === 1).length === 1 ? first : null;
}

/** Nest the section chunks by heading level: a heading nests under the nearest shallower one. */
export function buildTree(chunks: HeadedChunk[]): SectionInput[] {
  const roots: SectionInput[] = [];
  const stack: Array<{ level: number; node: SectionInput }> = [];
  for (const chunk of chunks) {
    const heading = chunk.heading!;
    const node: SectionInput = { title: heading.text };
    const text = chunk.paragraphs.join('\n\n');
    if (text) node.text = text;
    while (stack.length > 0 && stack[stack.length - 1].level >= heading.level) stack.pop();
    const parent = stack[stack.length - 1]?.node;
    if (parent) (parent.sections ??= []).push(node);
    else roots.push(node);
    stack.push({ level: heading.level, node });
  }
  return roots;
}

/**
 * Chunks whose heading has no text, merged into the chunk before them (the section they stand in,
 * in reading order; the first chunk, the text before any heading, always exists): an untitled
 * heading is no section, and one odd heading must not refuse its page. `merged` is told of each.
 */
export function mergeUntitled<C extends HeadedChunk>(chunks: C[], merged: (chunk: C) => void): C[] {
  const kept: C[] = [];
  for (const chunk of chunks) {
    if (kept.length > 0 && chunk.heading && !chunk.heading.text) {
      kept[kept.length - 1].paragraphs.push(...chunk.paragraphs);
      merged(chunk);
    } else kept.push(chunk);
  }
  return kept;
}
