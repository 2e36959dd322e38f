import { existsSync } from 'node:fs';
import { IngestError } from './errors';
import { cleanFactbookText, factbookDir, factbookToDocument, readFactbook } from './factbook';
import { prepareDocument } from './prepare';
import type { PreparedDocument } from './types';

describe('factbook', () => {
  const all = readFactbook();
  const prepared = new Map<string, PreparedDocument>();
  const failures: string[] = [];
  for (const input of all) {
    try {
      prepared.set(input.key!, prepareDocument(input));
    } catch (e) {
      failures.push(e instanceof IngestError ? e.message : String(e));
    }
  }

  it('finds the package', () => {
    expect(existsSync(factbookDir())).toBe(true);
  });

  it('reads every profile, sorted by region and code', () => {
    expect(all.length).toBeGreaterThan(250);
    const keys = all.map((d) => d.key!);
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toContain('factbook/europe/gm');
  });

  it('prepares every profile without error', () => {
    expect(failures).toEqual([]);
    expect(prepared.size).toBe(all.length);
  });

  it('maps Germany: title, metadata, abstract and Government → Capital', () => {
    const de = prepared.get('factbook/europe/gm')!;
    expect(de.title).toBe('Germany');
    expect(de.source).toBe('factbook');
    expect(de.metadata).toEqual({ region: 'europe', code: 'gm' });
    expect(de.abstract).toMatch(/Europe's largest economy/);
    const capital = de.sections.find((s) => s.titlePath.join(' > ') === 'Germany > Government > Capital');
    expect(capital).toBeDefined();
    expect(capital!.depth).toBe(2);
    const text = de.passages
      .filter((p) => p.sectionPosition === capital!.position)
      .map((p) => p.text)
      .join(' ');
    expect(text).toContain('name: Berlin');
    expect(de.sections.filter((s) => s.depth === 1).map((s) => s.title)).toEqual([
      'Geography',
      'People and Society',
      'Government',
      'Economy',
      'Energy',
      'Communications',
      'Transportation',
      'Military',
      'Transnational Issues',
    ]);
  });

  it('finds titles for irregular profiles ("none" short forms, no Government)', () => {
    const titles = new Map([...prepared.values()].map((d) => [d.key, d.title]));
    expect(titles.get('factbook/middle-east/ae')).toBe('United Arab Emirates'); // short form is "none"
    expect(titles.get('factbook/central-america-n-caribbean/cc')).toBe('Curacao'); // "Dutch short form"
    expect(titles.get('factbook/europe/ee')).toBe('European Union'); // "Union name"
    expect(titles.get('factbook/oceans/zn')).toBe('Pacific Ocean');
    expect([...titles.values()].filter((t) => !t || t.toLowerCase() === 'none')).toEqual([]);
  });

  it('gives most profiles an abstract', () => {
    const withAbstract = [...prepared.values()].filter((d) => d.abstract.length > 0).length;
    expect(withAbstract / prepared.size).toBeGreaterThan(0.95);
  });

  it('turns a category note into the category text and skips empty fields', () => {
    const doc = factbookToDocument(
      {
        Introduction: { Background: { text: 'Bg.' } },
        Geography: {
          Location: { text: 'Somewhere' },
          'Area comparison map': { text: null },
          Area: { total: { text: '1 sq km' }, land: { text: '' }, note: { text: 'tiny' } },
          'Geography - note': { text: 'a <strong>noted</strong> place &amp; more' },
        },
        Empty: {},
        Government: { 'Country name': { 'conventional short form': { text: 'Testland' } } },
      },
      'test-region',
      'tt',
    );
    expect(doc).toEqual({
      key: 'factbook/test-region/tt',
      title: 'Testland',
      abstract: 'Bg.',
      source: 'factbook',
      metadata: { region: 'test-region', code: 'tt' },
      sections: [
        {
          title: 'Geography',
          text: 'a noted place & more',
          sections: [
            { title: 'Location', text: 'Somewhere' },
            { title: 'Area', text: 'total: 1 sq km.\n\nnote: tiny.' },
          ],
        },
        {
          title: 'Government',
          sections: [{ title: 'Country name', text: 'conventional short form: Testland.' }],
        },
      ],
    });
  });

  it('falls back to the code as title', () => {
    expect(factbookToDocument({ Geography: { Location: { text: 'x' } } }, 'r', 'qq').title).toBe('qq');
  });

  it('cleans HTML-ish markup and entities', () => {
    expect(cleanFactbookText('a<br>b <strong>c</strong> &lt;d&gt; &#233;&#x41;&nbsp;e')).toBe('a\nb c <d> éA e');
  });

  it('honours limit and regions', () => {
    const some = readFactbook({ regions: ['europe', 'oceans'], limit: 3 });
    expect(some.map((d) => d.key)).toEqual(
      all
        .filter((d) => /^factbook\/(europe|oceans)\//.test(d.key!))
        .slice(0, 3)
        .map((d) => d.key),
    );
  });
});
