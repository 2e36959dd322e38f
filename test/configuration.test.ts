import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/cli/program';
import { ConfigError, loadConfig } from '../src/config';
import { configurationPage, defaultText, ENVIRONMENT_VARIABLES, VARIABLE_GROUPS } from '../src/config/variables';
import { packageRoot } from '../src/paths';

/**
 * The table of environment variables (src/config/variables.ts) is the one list of them: `dhr
 * --help` prints it, docs/configuration.md is generated from it, and every variable src/ reads is
 * in it.
 */
const root = packageRoot();

/** Variables of the system, not of the product, that src/ may read (the user name a connection error names). */
const SYSTEM = new Set(['USER']);

/** Every environment variable a tracked source file under src/ reads, with where. */
function variablesRead(): Map<string, string[]> {
  const files = execFileSync('git', ['ls-files', '-z', 'src'], { cwd: root, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('src/generated/'));
  const patterns = [
    /process\.env\.([A-Z][A-Z0-9_]*)/g, // process.env.NAME
    /process\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]/g, // process.env['NAME']
    /\benv\??\.([A-Z][A-Z0-9_]*)/g, // env.NAME of an env parameter (src/config.ts)
    /Setting(?:<[^>]*>)?\(env, '([A-Z][A-Z0-9_]*)'/g, // intSetting(env, 'NAME') and the like (src/config.ts)
    /\.env\('([A-Z][A-Z0-9_]*)'\)/g, // commander's Option.env('NAME')
  ];
  const read = new Map<string, string[]>();
  for (const file of files) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) read.set(m[1], [...(read.get(m[1]) ?? []), file]);
    }
  }
  return read;
}

describe('the table of environment variables', () => {
  const names = ENVIRONMENT_VARIABLES.map((v) => v.name);

  it('names each variable once, in a known group, with a default and a one-line description', () => {
    expect(new Set(names).size).toBe(names.length);
    for (const v of ENVIRONMENT_VARIABLES) {
      expect(Object.keys(VARIABLE_GROUPS)).toContain(v.group);
      expect(defaultText(v).trim()).not.toBe('');
      expect(v.description.trim()).not.toBe('');
      expect(`${defaultText(v)}${v.description}`).not.toMatch(/[\n|]/);
    }
  });

  it("is where loadConfig finds each setting's range and choices, and its default is one of them", () => {
    for (const v of ENVIRONMENT_VARIABLES) {
      const s = v.setting;
      if (!s) continue;
      const refused = (raw: string) => {
        expect(() => loadConfig({ [v.name]: raw })).toThrow(ConfigError);
        expect(() => loadConfig({ [v.name]: raw })).toThrow(v.name);
      };
      if (s.kind === 'int' || s.kind === 'number') {
        if (s.value !== undefined) expect(s.value).toBeGreaterThanOrEqual(s.min);
        if (s.value !== undefined) expect(s.value).toBeLessThanOrEqual(s.max);
        refused(String(s.max + 1));
        refused(String(s.min - 1));
        if (s.kind === 'int') refused(String(s.min + 0.5));
        expect(() => loadConfig({ [v.name]: String(s.max) })).not.toThrow();
      }
      if (s.kind === 'choice') {
        if (s.value !== undefined) expect(s.choices).toContain(s.value);
        refused('not-a-choice');
        for (const c of s.choices) expect(() => loadConfig({ [v.name]: c })).not.toThrow();
      }
      if (s.kind === 'bool') refused('maybe');
    }
  });

  it('holds every variable src/ reads, and only those', () => {
    const read = variablesRead();
    const missing = [...read.keys()].filter((n) => !SYSTEM.has(n) && !names.includes(n)).map((n) => `${n} (${[...new Set(read.get(n))].join(', ')})`);
    expect(missing).toEqual([]);
    expect(names.filter((n) => !read.has(n))).toEqual([]);
  });

  it('is what dhr --help lists', () => {
    let help = '';
    const program = buildProgram(async () => undefined).configureOutput({ writeOut: (s) => void (help += s) });
    program.outputHelp();
    for (const name of names) expect(help).toMatch(new RegExp(`^ +${name} \\(`, 'm'));
  });

  it('is docs/configuration.md (npx tsx scripts/docs-configuration.ts rewrites it)', () => {
    expect(readFileSync(join(root, 'docs', 'configuration.md'), 'utf8')).toBe(configurationPage());
  });
});
