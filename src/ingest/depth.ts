/**
 * Nesting bounds, measured iteratively: callers check them before any recursive walk (parsers,
 * canonical JSON, the section flattening), so a tree 10,000 levels deep is refused with a message
 * instead of overflowing the stack.
 */

export const DEFAULT_MAX_SECTION_DEPTH = 64;
export const DEFAULT_MAX_METADATA_DEPTH = 32;

/**
 * Whether a JSON value nests objects and arrays deeper than `limit` (a scalar is depth 0,
 * `{}` and `{"a": 1}` are 1). Stops as soon as the limit is passed.
 */
export function jsonDeeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** Whether a title tree (`[{ sections: [...] }]`) has sections nested deeper than `limit` levels. */
export function sectionsDeeperThan(sections: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[sections, 1]];
  while (stack.length > 0) {
    const [list, depth] = stack.pop() as [unknown, number];
    if (!Array.isArray(list) || list.length === 0) continue;
    if (depth > limit) return true;
    for (const s of list) {
      if (s !== null && typeof s === 'object' && 'sections' in s) stack.push([(s as { sections: unknown }).sections, depth + 1]);
    }
  }
  return false;
}
