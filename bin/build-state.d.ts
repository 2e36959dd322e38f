/** Types of build-state.js (plain JavaScript, for bin/dhr.js), for the TypeScript that uses it. */
export function newestSource(dir: string, pattern?: RegExp): number;
export function builtEntry(root: string): string;
export function buildIsStale(root: string): boolean;
