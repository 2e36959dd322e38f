import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { SectionInput } from '../ingest/types';
import { hasAnswer } from './metrics';
import { buildPyapi, PER_MODULE } from './pyapi';

describe('the entity–attribute set on the Python docs', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'pyapi-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const sources = path.join(root, 'usr/share/doc/python3.11/html/_sources/library');
  mkdirSync(sources, { recursive: true });
  writeFileSync(path.join(sources, 'modulefinder.rst.txt'), readFileSync(path.join(__dirname, '../../test/fixtures/eval/modulefinder.rst.txt')));
  // a page without a module directive asks nothing
  writeFileSync(path.join(sources, 'misc.rst.txt'), 'Odds and ends\n=============\n\n.. function:: helper(x)\n\n   Helps.\n');
  const set = buildPyapi(root, root);

  it('asks about a module page’s own functions and classes by name and module, at most PER_MODULE of them', () => {
    expect(set.corpus).toBe('pydocs');
    expect(set.documents.map((d) => d.key).sort()).toEqual(['pydocs/library/misc', 'pydocs/library/modulefinder']);
    expect(set.questions).toHaveLength(PER_MODULE);
    const asked = new Map([
      ['What does the AddPackagePath function in modulefinder do?', 'AddPackagePath(pkg_name, path)'],
      ['What does the ReplacePackage function in modulefinder do?', 'ReplacePackage(oldname, newname)'],
      ['What is the ModuleFinder class in modulefinder for?', 'ModuleFinder(path=None, debug=0, excludes=[], replace_paths=[])'],
    ]);
    for (const q of set.questions) {
      // methods (ModuleFinder.report) and attributes without arguments are never asked about
      expect(asked.get(q.question)).toEqual(q.answers![0]);
      expect(q.goldDocuments).toEqual(['pydocs/library/modulefinder']);
    }
  });

  it('gives answers that the passage documenting the object holds', () => {
    const doc = set.documents.find((d) => d.key === 'pydocs/library/modulefinder')!;
    const texts = (sections: SectionInput[]): string[] => sections.flatMap((s) => [s.text ?? '', ...texts(s.sections ?? [])]);
    const all = [doc.abstract ?? '', ...texts(doc.sections ?? [])];
    for (const q of set.questions) expect(all.filter((t) => hasAnswer(t, q.answers!)).length).toBeGreaterThan(0);
  });
});
