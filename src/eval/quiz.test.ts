import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { readFactbook } from '../ingest/factbook';
import { matchCountry } from './factbook';
import { normalizeAnswerText } from './metrics';
import { parseQuiz } from './quiz';

/** Lines copied verbatim from bsdgames' quiz files africa and europe (BSD licence). */
const items = parseQuiz(readFileSync(path.join(__dirname, '../../test/fixtures/eval/quiz-capitals.txt'), 'utf8'));
const item = (prompt: string) => items.find((i) => i.prompt === prompt)!;

describe('parseQuiz on real bsdgames lines', () => {
  it('reads one item per line', () => {
    expect(items).toHaveLength(15);
  });

  it('expands alternatives, optional parts and groups', () => {
    expect(item('Chad').answers).toEqual(["N'Djamena", 'Ndjamena']);
    expect(item('Italy').answers).toEqual(['Rome', 'Roma']);
    expect(item('Central African Republic').prompts).toEqual(['Central Africa', 'Central African Rep', 'Central African Republic']);
    expect(item('Ireland').prompts).toEqual(['Ireland', 'Eire']);
    expect(item('DR Congo').prompts).toEqual(['Congo', 'DR Congo', 'Democratic Republic of the Congo']);
  });

  it('takes plain letters from accent groups for the readable prompt', () => {
    expect(items.map((i) => i.prompt)).toContain("Cote d'Ivoire");
    expect(item('Cameroon').answers).toContain('Yaounde');
    expect(item('Denmark').answers).toContain('Kobenhavn');
  });
});

describe('matching quiz countries to Factbook profiles', () => {
  const byName = new Map(readFactbook().map((d) => [normalizeAnswerText(d.title!), d]));
  const match = (prompt: string) => {
    const i = item(prompt);
    return matchCountry(i.prompt, i.prompts, byName)?.title ?? null;
  };

  it('matches by normalised name and through the alias table', () => {
    expect(match('Algeria')).toBe('Algeria');
    expect(match("Cote d'Ivoire")).toBe("Cote d'Ivoire");
    expect(match('Cape Verde')).toBe('Cabo Verde');
    expect(match('Rep. Congo')).toBe('Congo (Brazzaville)');
    // "Congo" is one of its forms, but the alias decides: the Democratic Republic.
    expect(match('DR Congo')).toBe('DRC');
    expect(match('The Gambia')).toBe('The Gambia');
  });

  it('leaves places without a profile unmatched', () => {
    expect(match('Mayotte')).toBeNull();
  });
});
