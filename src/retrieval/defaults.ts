/**
 * retrieve's defaults for what a question leaves out, written once: the GraphQL arguments, the
 * tune, the eval, the MCP search tool and the console read them. Free of imports, so the console's
 * bundle can take it too.
 */
export const RETRIEVE_DEFAULTS = {
  /** Documents stage 1 keeps. */
  k1: 100,
  /** Passages returned. */
  k2: 20,
} as const;
