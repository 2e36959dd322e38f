/**
 * Test fixture: a tiny BERT WordPiece tokenizer.json (lowercasing BertNormalizer, BertPreTokenizer,
 * TemplateProcessing "[CLS] $A [SEP]"), in the shape the Hugging Face tokenizers library saves.
 */

export const SPECIALS = ['[PAD]', '[UNK]', '[CLS]', '[SEP]'] as const;

export const WORDS = [
  'the',
  'a',
  'of',
  'is',
  'in',
  'and',
  'country',
  'capital',
  'city',
  'river',
  'population',
  'what',
  'where',
  'which',
  'largest',
  'france',
  'paris',
  'germany',
  'berlin',
  'query',
  'passage',
  ':',
  '?',
  '.',
  'north',
  'south',
  'border',
  '##s',
  '##ing',
  'mountain',
];

/** Ids: specials 0..3, then WORDS in order. */
export const VOCAB: Record<string, number> = Object.fromEntries([...SPECIALS, ...WORDS].map((t, i) => [t, i]));

export const id = (token: string): number => {
  const v = VOCAB[token];
  if (v === undefined) throw new Error(`no token ${token}`);
  return v;
};

export interface TinyTokenizerOptions {
  /** Extra vocab entries (e.g. ids beyond the model's embedding rows). */
  extraVocab?: Record<string, number>;
  /** Declares truncation.max_length, as exports with a fixed model limit do. */
  truncationMaxLength?: number;
}

export function tinyTokenizerJson(o: TinyTokenizerOptions = {}): object {
  const vocab = { ...VOCAB, ...o.extraVocab };
  const special = (content: string) => ({
    id: VOCAB[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  return {
    version: '1.0',
    truncation: o.truncationMaxLength === undefined ? null : { direction: 'Right', max_length: o.truncationMaxLength, strategy: 'LongestFirst', stride: 0 },
    padding: null,
    added_tokens: SPECIALS.map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [VOCAB['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [VOCAB['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}
