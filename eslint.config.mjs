// typescript-eslint for what needs the type checker, and only that: floating and misused
// promises (a promise that nobody awaits or catches; an async function where a void callback is
// expected). Biome (biome.jsonc) runs every other rule, and its own noFloatingPromises cannot see
// the types of dependencies. Type-aware linting builds the TypeScript program (about a minute of
// CPU here), so no other rule is added: each one is paid for on every CI run.
import tseslint from 'typescript-eslint';

export default [
  { ignores: ['**/node_modules/**', 'dist/**', 'src/generated/**', 'coverage/**', '.cache/**'] },
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts', 'console/src/**/*.{ts,tsx}'],
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
];
