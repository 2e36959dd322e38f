/** The 58 parity inputs: questions, tiny texts, punctuation, unicode, empty-ish, passages, >128 tokens. */
import { passage } from '../../bench/passages';

export const PARITY_INPUTS: readonly string[] = [
  // short questions
  'What is the capital of France?',
  'How do I reset my password?',
  'Who wrote Hamlet?',
  'Is it going to rain tomorrow?',
  'Why is the sky blue?',
  "where's the nearest coffee shop",
  'Can you recommend a good book on machine learning?',
  'How many legs does a spider have?',
  'what time is it',
  'Hello world! How are you?',
  // single words / tiny
  'hello',
  'a',
  'I',
  '42',
  'x',
  'Universal',
  'antidisestablishmentarianism',
  // punctuation / casing / numbers / whitespace
  '!!!???...',
  'e-mail: john.doe@example.com, phone: +1 (555) 123-4567',
  'C++ vs. C# vs. F#; which one?',
  'THE QUICK BROWN FOX JUMPS OVER THE LAZY DOG',
  'The year 2024 had 366 days; 3.14159 is pi.',
  '   leading and trailing spaces   ',
  'multiple    internal     spaces',
  'tabs\tand\nnewlines\r\nhere',
  'path/to/file.txt and https://example.org/a?b=c&d=e#frag',
  // unicode
  'Café déjà vu, naïve façade, résumé.',
  'Grüße aus München! Straße',
  '¿Dónde está la biblioteca?',
  'Москва — столица России.',
  '東京は日本の首都です。',
  '北京欢迎你',
  '안녕하세요 세계',
  'مرحبا بالعالم',
  'I love pizza 🍕🍕 and emoji 😀👍🏽!',
  'ﬁne ﬂour and ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３',
  'e\u0301 vs é (combining vs precomposed)',
  '½ ¼ ™ © ® ° µ',
  '\u200bzero\u200bwidth\u200bspaces',
  'math: ∑ ∫ √ ∞ ≠ ≤ ≥',
  '→ ← ↑ ↓ ═ ░ ►',
  // empty-ish (non-empty after normalization: the reference embeds them)
  ' ',
  '  ',
  '\n',
  '\t',
  '.',
  '🍕',
  '\u00a0',
  '\uFFFD',
  // ~100-word passages
  passage(1),
  passage(2),
  passage(3),
  passage(4),
  passage(5),
  'The Universal Sentence Encoder encodes text into high dimensional vectors that can be used for text ' +
    'classification, semantic similarity, clustering and other natural language tasks. The model is trained and ' +
    'optimized for greater-than-word length text, such as sentences, phrases or short paragraphs. It is trained on a ' +
    'variety of data sources and a variety of tasks with the aim of dynamically accommodating a wide variety of ' +
    'natural language understanding tasks. The input is variable length English text and the output is a 512 ' +
    'dimensional vector. The lite version uses a SentencePiece vocabulary to keep the model small.',
  // long texts (> 128 tokens: the graph clips them)
  passage(6, 300),
  passage(7, 600),
  Array.from({ length: 40 }, (_, i) => `Item ${i}: value=${(i * 7) % 13}`).join('; '),
];
