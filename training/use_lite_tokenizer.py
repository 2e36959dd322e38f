"""Python port of the project's USE-lite tokenizer (src/encoders/use-lite/tokenizer.ts), quirks included.

Training uses it so the frozen passage vectors and the question ids are exactly what the project's
UseLiteEncoder would compute (parity.py checks it against the TypeScript on every text it uses).
  - NFKC, "▁" prepended, only U+0020 → "▁"; the lattice is over code points;
  - an unmatched code point (no piece at all starts there) is id 0 with score 0;
  - Viterbi keeps the LAST candidate on ties (>=) and treats best == 0 as unset;
  - back-tracking by the piece's UTF-16 length (the vocab has no astral pieces, so = code points);
  - consecutive unknown ids merged; the first 6 vocab entries are not matchable; no BOS/EOS.
"""
from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

from use_lite import DEFAULT_MODEL_DIR

SEP = '\u2581'
RESERVED = 6


class UseLiteTokenizer:
    def __init__(self, vocab: list):
        self.root: dict = {}
        self.utf16_len = [len(p.encode('utf-16-le')) // 2 for p, _ in vocab]
        for i in range(RESERVED, len(vocab)):
            node = self.root
            for ch in vocab[i][0]:
                node = node.setdefault(ch, {})
            node[None] = (i, float(vocab[i][1] or 0.0))  # later duplicates overwrite, as in the reference

    @classmethod
    def from_model_dir(cls, model_dir: str | os.PathLike = DEFAULT_MODEL_DIR) -> 'UseLiteTokenizer':
        return cls(json.loads((Path(model_dir) / 'vocab.json').read_text()))

    def encode(self, text: str) -> list[int]:
        norm = unicodedata.normalize('NFKC', text)
        if not norm:
            return []
        symbols = SEP + norm.replace(' ', SEP)
        # JS iterates code points; Python str indexing is by code point already.
        n = len(symbols)
        ends: list[list[tuple[int, int, float, int]]] = [[] for _ in range(n + 1)]
        root = self.root
        for i in range(n):
            node = root.get(symbols[i])
            found = False
            j = i
            while node is not None:
                hit = node.get(None)
                if hit is not None:
                    ends[j + 1].append((i, hit[0], hit[1], j + 1 - i))
                    found = True
                j += 1
                node = node.get(symbols[j]) if j < n else None
            if not found:
                ends[i + 1].append((i, 0, 0.0, 1))
        best = [0.0] * (n + 1)
        words = [0] * (n + 1)
        for e in range(n + 1):
            be = 0.0
            we = 0
            for _, pid, score, ln in ends[e]:
                s = score + best[e - ln]
                if be == 0 or s >= be:
                    be = s
                    we = pid
            best[e] = be
            words[e] = we
        out: list[int] = []
        it = n
        while it > 0:
            out.append(words[it])
            it -= self.utf16_len[words[it]]
        merged: list[int] = []
        prev_unk = False
        for pid in out:
            if not (prev_unk and pid == 0):
                merged.append(pid)
            prev_unk = pid == 0
        merged.reverse()
        return merged
