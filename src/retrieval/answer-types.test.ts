import { classifyQuestion } from './answer-types';

describe('classifyQuestion', () => {
  it.each([
    ['When was Lindesnes Lighthouse first lit?', 'date'],
    ['In what year did Norway make its largest oil find?', 'date'],
    ['Until when was the tax increase put off?', 'date'],
    ['How many stars does the flag have?', 'quantity'],
    ['How much of its food does Japan import?', 'quantity'],
    ['What share of Kenyans work in agriculture?', 'quantity'],
    ["What was Kenya's GDP in 2013?", 'quantity'],
    ['Who launched the Three Arrows agenda?', 'person'],
    ['Which parent bank failed?', 'person'],
    ['Where does most economic activity happen?', 'place'],
    ['Which islands does Saudi Arabia claim?', 'place'],
    ['What is the capital of Norway?', 'place'],
    ['What is keiretsu?', 'definition'],
    ['What does the msgPrefix option do?', 'definition'],
    ['Define sovereign wealth fund', 'definition'],
    ['How do I disable logging?', 'instruction'],
    ['How can pipes be used in a systemd service?', 'instruction'],
    ['Which package do I install for Koa?', 'instruction'],
    ['What is the default key for errors?', 'other'],
    ['What colour is the flag?', 'other'],
  ])('%s → %s', (question, type) => {
    expect(classifyQuestion(question)).toBe(type);
  });

  it('gives OTHER to one word, to nothing, and to questions in other languages', () => {
    expect(classifyQuestion('Lighthouse')).toBe('other');
    expect(classifyQuestion('')).toBe('other');
    expect(classifyQuestion('   ?!')).toBe('other');
    expect(classifyQuestion('Quand le phare a-t-il été allumé ?')).toBe('other');
    expect(classifyQuestion('灯台はいつ点灯されましたか')).toBe('other');
  });
});
