"""Training-cost bench for finetune.py: time and memory of question-side fine-tuning.

  python3 training/bench.py [--pairs 20000] [--question-tokens 12] [--negatives 8] [--epochs 1]
                            [--train all|top|head] [--lengths-from PAIRS.jsonl] [--out bench.json]

Synthetic data of the real shapes, so the bench needs no store: N pairs, each a question of
--question-tokens random ids (or lengths drawn from a real pairs file's questions with
--lengths-from), one positive and --negatives hard negatives, all distinct frozen 512-d passage
vectors (random unit vectors: N × (1 + negatives) of them, float32; what finetune.py holds after
encoding the pairs' passages). The loop is finetune.train itself (same batches, loss, masking,
optimizer), with held-out evaluation off. Reported: seconds per epoch, pairs per second, and memory
(peak RSS, and RSS growth while holding the data and training), at torch.set_num_threads(1).

Memory: the process holds the model (7.3M parameters + AdamW state), one batch's activations and
the vectors of the pairs' passages; nothing scales with the corpus, only with pairs × (1 + negatives).
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch

from finetune import QUESTION_TOKENS, Data, train
from use_lite import UseLite


def rss_mb() -> float:
    for line in Path('/proc/self/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
    return float('nan')


def main() -> int:
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--pairs', type=int, default=20000)
    ap.add_argument('--question-tokens', type=int, default=12)
    ap.add_argument('--lengths-from', help='draw question lengths from this pairs JSONL (its tokenized questions)')
    ap.add_argument('--negatives', type=int, default=8)
    ap.add_argument('--epochs', type=int, default=1)
    ap.add_argument('--batch-size', type=int, default=64)
    ap.add_argument('--train', choices=['all', 'top', 'head'], default='all')
    ap.add_argument('--max-steps', type=int, default=0, help='stop after this many steps and extrapolate (0: full epochs)')
    ap.add_argument('--out')
    a = ap.parse_args()
    rng = random.Random(0)
    torch.manual_seed(0)

    rss0 = rss_mb()
    model = UseLite.load()
    rss_model = rss_mb()

    if a.lengths_from:
        from use_lite_tokenizer import UseLiteTokenizer

        tok = UseLiteTokenizer.from_model_dir()
        lengths = [min(QUESTION_TOKENS, len(tok.encode(json.loads(l)['question']))) for l in Path(a.lengths_from).read_text().splitlines() if l.strip()]
    else:
        lengths = [a.question_tokens]
    n, k = a.pairs, a.negatives
    questions = [[rng.randrange(6, 8000) for _ in range(rng.choice(lengths))] for _ in range(n)]
    P = n * (1 + k)
    vectors = torch.randn(P, 512)
    vectors /= vectors.norm(dim=1, keepdim=True)
    pkeys = [{('pid', r)} for r in range(P)]
    data = Data(
        questions=questions,
        positive=[i * (1 + k) for i in range(n)],
        negatives=[[i * (1 + k) + j for j in range(1, 1 + k)] for i in range(n)],
        qkeys=[{('pid', i * (1 + k))} for i in range(n)],
        pkeys=pkeys,
        kinds=['synthetic'] * n,
        vectors=vectors,
        split=[False] * n,
    )
    rss_data = rss_mb()

    args = SimpleNamespace(train=a.train, l2sp=0.0, lr=5e-5, batch_size=a.batch_size, epochs=a.epochs, seed=0, temperature=0.05, log_every=50, time_budget=0, patience=99)
    idx = list(range(n))
    if a.max_steps:
        idx = idx[: a.max_steps * a.batch_size]
    t0 = time.time()
    record = train(model, data, idx, [], args, log=lambda s: print(s, file=sys.stderr))
    seconds = time.time() - t0
    scale = n / len(idx)
    tokens = sum(len(q) for q in questions) / n
    result = {
        'pairs': n,
        'pairsTimed': len(idx),
        'negativesPerPair': k,
        'frozenVectors': P,
        'frozenVectorsMB': round(vectors.numel() * 4 / 2**20, 1),
        'meanQuestionTokens': round(tokens, 1),
        'train': a.train,
        'batchSize': a.batch_size,
        'epochs': a.epochs,
        'torchThreads': torch.get_num_threads(),
        'secondsTimed': round(seconds, 1),
        'secondsPerEpoch': round(seconds * scale / a.epochs, 1),
        'pairsPerSecond': round(len(idx) * a.epochs / seconds, 1),
        'rssStartMB': round(rss0, 1),
        'rssAfterModelMB': round(rss_model, 1),
        'rssAfterDataMB': round(rss_data, 1),
        'rssEndMB': round(rss_mb(), 1),
        'peakRssMB': round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        'trainableParameters': record['trainableParameters'],
    }
    text = json.dumps(result, indent=2)
    if a.out:
        Path(a.out).write_text(text + '\n')
    print(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
