/** Types of build-state.js (plain JavaScript, for bin/dhr.js and bin/setup.js), for the TypeScript that uses it. */
export function newestSource(dir: string, pattern?: RegExp): number;
export function builtEntry(root: string): string;
export function buildStamp(root: string): string;
export function buildIsStale(root: string): boolean;
export function consolePage(root: string): string;
export function consoleIsStale(root: string): boolean;
export function clientStamp(root: string): string;
export function clientInputs(root: string): string | undefined;
export function clientIsStale(root: string): boolean;
