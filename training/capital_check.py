"""Out-of-distribution check: natural questions the pairs never contain.

  python3 training/capital_check.py WEIGHTS.pt [WEIGHTS2.pt ...] [--factbook F] [--pool 5000]

"What is the capital of X?" for every Factbook profile with a Government › Capital field (the
project's eval asks the same question, docs/eval/); the gold passage is that field's passage
("X, Government, Capital, name: …", the passage encoding text). Pool: every Capital passage plus
--pool other Factbook passages (seeded sample), all encoded once by the ORIGINAL USE-lite (frozen,
as in the index). Each question ranks its gold passage: recall@1/@10 and MRR for the original
question encoder and for each fine-tuned state_dict. This approximates the store's passages
(fields of up to 100 words are one passage there too); it is not the project's eval harness.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import torch

from finetune import PASSAGE_TOKENS, QUESTION_TOKENS
from use_lite import UseLite, encode_ids
from use_lite_tokenizer import UseLiteTokenizer


def main() -> int:
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser()
    ap.add_argument('weights', nargs='*')
    ap.add_argument('--factbook', default='/tmp/train-store/factbook.json')
    ap.add_argument('--pool', type=int, default=5000)
    a = ap.parse_args()
    docs = json.loads(Path(a.factbook).read_text())
    questions, gold_texts, others = [], [], []
    for d in docs:
        for sec in d.get('sections') or []:
            for sub in sec.get('sections') or []:
                text = sub.get('text')
                if not text:
                    continue
                words = text.split()
                path = [d['title'], sec['title'], sub['title']]
                pieces = [', '.join(path) + ', ' + ' '.join(words[s : s + 100]) for s in range(0, len(words), 100)]
                if sec['title'] == 'Government' and sub['title'] == 'Capital':
                    questions.append(f"What is the capital of {d['title']}?")
                    gold_texts.append(pieces[0])
                else:
                    others += pieces
    rng = random.Random(0)
    pool_texts = gold_texts + rng.sample(others, min(a.pool, len(others)))
    tok = UseLiteTokenizer.from_model_dir()
    original = UseLite.load().eval()
    with torch.no_grad():
        P = encode_ids(original, [tok.encode(t)[:PASSAGE_TOKENS] for t in pool_texts])
    qids = [tok.encode(q)[:QUESTION_TOKENS] for q in questions]
    target = torch.arange(len(questions))

    def score(model: UseLite) -> dict:
        with torch.no_grad():
            Q = encode_ids(model.eval(), qids)
        s = Q @ P.T
        own = s[target, target]
        rank = (s > own.unsqueeze(1)).sum(1) + 1
        return {'recall@1': float((rank <= 1).float().mean()), 'recall@10': float((rank <= 10).float().mean()), 'mrr': float((1.0 / rank.float()).mean())}

    out = {'questions': len(questions), 'pool': len(pool_texts), 'use-lite': score(original)}
    for w in a.weights:
        m = UseLite.load()
        m.load_state_dict(torch.load(w, map_location='cpu'))
        out[w] = score(m)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
