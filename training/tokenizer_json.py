"""USE-lite's vocab.json → a HuggingFace tokenizer.json (Unigram) that @huggingface/tokenizers loads.

The project's tokenizer (src/encoders/use-lite/tokenizer.ts) is SentencePiece-style unigram over
the whole text (no whitespace pre-splitting): NFKC, then "▁" prepended and every U+0020 → "▁",
then Viterbi over code points. tokenizer.json reproduces that as:

  normalizer     Sequence[NFKC, Prepend("▁"), Replace(" " → "▁")]   (same order as the project)
  pre_tokenizer  none   (the lattice spans the whole text, like the project's)
  model          Unigram, vocab = vocab.json's [piece, score] (null scores → 0, as the project
                 adds them), unk_id 0
  truncation     128 tokens (the graph's own clip), so DHR caps every budget at 128 as for use-lite

The first 6 pieces ("�", <s>, </s>, extra_token_id_1..3) are never matched by the project's
tokenizer; here they get a U+0020 inside their string, which the normalizer turns into "▁" in any
text, so the lattice can never match them either. Their ids stay where they are.

Known, measured differences (docs/training-encoder.md): unknown code points. The project gives an
unmatched code point score 0 (the best score there is) and only when no piece at all starts there;
@huggingface/tokenizers gives it min(score) - 10 whenever no single-character piece starts there.
Ties between equal-score paths are also broken differently (project: last candidate; HF: first).
And the JS library prepends "▁" to an empty text, so "" gives one token instead of none.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from use_lite import DEFAULT_MODEL_DIR, MAX_LEN

SEP = '\u2581'
RESERVED = 6


def tokenizer_json(model_dir: str | os.PathLike = DEFAULT_MODEL_DIR) -> dict:
    vocab = json.loads((Path(model_dir) / 'vocab.json').read_text())
    pieces = []
    for i, (piece, score) in enumerate(vocab):
        if i < RESERVED:
            piece = f'<use-lite reserved {i}: {piece}>'  # contains U+0020: unmatchable after the normalizer
        pieces.append([piece, float(score) if score is not None else 0.0])
    return {
        'version': '1.0',
        'truncation': {'direction': 'Right', 'max_length': MAX_LEN, 'strategy': 'LongestFirst', 'stride': 0},
        'padding': None,
        'added_tokens': [],
        'normalizer': {
            'type': 'Sequence',
            'normalizers': [
                {'type': 'NFKC'},
                {'type': 'Prepend', 'prepend': SEP},
                {'type': 'Replace', 'pattern': {'String': ' '}, 'content': SEP},
            ],
        },
        'pre_tokenizer': None,
        'post_processor': None,
        'decoder': {'type': 'Metaspace', 'replacement': SEP, 'prepend_scheme': 'always', 'split': False},
        'model': {'type': 'Unigram', 'unk_id': 0, 'vocab': pieces, 'byte_fallback': False},
    }


def write_tokenizer_json(out: str | os.PathLike, model_dir: str | os.PathLike = DEFAULT_MODEL_DIR) -> None:
    Path(out).write_text(json.dumps(tokenizer_json(model_dir), ensure_ascii=False))


if __name__ == '__main__':
    import sys

    if len(sys.argv) != 2:
        sys.exit('usage: python3 training/tokenizer_json.py OUT/tokenizer.json')
    write_tokenizer_json(sys.argv[1])
    print(f'wrote {sys.argv[1]}')
