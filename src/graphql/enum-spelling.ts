/** A TypeScript enum value as the GraphQL enum spells it: questionDocument → QUESTION_DOCUMENT, section-path → SECTION_PATH (no type-graphql here: the CLI reads it). */
export const enumSpelling = (value: string): string =>
  value
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .replace(/-/g, '_')
    .toUpperCase();
