"""Question-side fine-tuning of USE-lite (DensePhrases §4.3 "query-side fine-tuning") on mined pairs.

  python3 training/finetune.py PAIRS.jsonl OUT_DIR [--name use-lite-q-ft] [--cache DIR] [options]

The passage side stays the original USE-lite: every passage of the pairs file (positive and hard
negatives) is encoded ONCE by the untrained model (no gradient) and kept as a frozen vector, cached
under --cache by the hash of its encoding text. Those are exactly the vectors DHR stores for
use-lite, so the fine-tuned model can serve the question roles against the existing index with no
re-embedding. Only a copy of the model on the question side is trained.

Loss (per batch of B questions): softmax cross-entropy over the batch's candidate passages = every
positive of the batch (in-batch negatives) + every hard negative of the batch (the file's bm25,
inDoc, inSec and judged lists, at most --negatives-per-kind of each), scores = q·p / --temperature.
A candidate that also answers a question (the same passage; for section-path pairs a passage under
the question's title path; for document-title pairs an abstract passage of the same document) is
masked out of that question's negatives, as the miner itself does. Optional L2-SP regularisation
--l2sp λ·Σ‖θ−θ₀‖² pulls the weights toward the original ones.

Held-out pairs (--held-out, split by question so a question is never on both sides) are scored after
every epoch: each held-out question ranks ITS positive among the pool of every held-out passage
(all positives and all their negatives), with the same false-negative masking; recall@1/@10 and MRR.
Training stops when MRR has not improved for --patience epochs, and the best epoch's weights are
exported (export.py) to OUT_DIR with a record, OUT_DIR/training-record.json: settings, pair counts,
loss curve, held-out metrics before training and after each epoch, time and peak memory.

Roles: the pairs train question→passage only (the pairs file has no document summaries, so the
document side cannot be computed from it); use the folder as ENCODER_QUESTION_PASSAGE.
"""
from __future__ import annotations

import argparse
import copy
import hashlib
import json
import math
import random
import resource
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from use_lite import DIM, UseLite, encode_ids, pad_batch
from use_lite_tokenizer import UseLiteTokenizer

QUESTION_TOKENS = 80  # DEFAULT_MAX_TOKENS.question (src/encoders/types.ts), below the graph's 128
PASSAGE_TOKENS = 128  # min(DEFAULT_MAX_TOKENS.passage = 280, 128)
NEGATIVE_KINDS = ('judged', 'bm25', 'inSec', 'inDoc')


def passage_encoding_text(p: dict) -> str:
    """src/ingest/summary.ts passageEncodingText: "Doc, Section, Subsection, passage text"."""
    return ', '.join(p['titlePath']) + ', ' + p['text']


def passage_keys(p: dict) -> set:
    """What a passage answers: itself, every title-path prefix it sits under, and its document's abstract."""
    keys = {('pid', p['passageId'])}
    path = tuple(p['titlePath'])
    for k in range(1, len(path) + 1):
        keys.add(('path', path[:k]))
    if p.get('sectionId') is None:
        keys.add(('abstract', p['documentId']))
    return keys


def question_keys(pair: dict) -> set:
    """The passages that answer a pair's question, as passage_keys of them (see the miner's rules)."""
    pos = pair['positive']
    keys = {('pid', pos['passageId'])}
    if pair['kind'] == 'section-path':
        keys.add(('path', tuple(pos['titlePath'])))
    elif pair['kind'] == 'document-title':
        keys.add(('abstract', pos['documentId']))
    return keys


@dataclass
class Data:
    """Pairs as indices into one table of frozen passage vectors."""

    questions: list[list[int]]  # token ids, truncated to QUESTION_TOKENS
    positive: list[int]  # passage row of each pair's positive
    negatives: list[list[int]]  # hard-negative rows of each pair
    qkeys: list[set]
    pkeys: list[set]  # per passage row
    kinds: list[str]
    vectors: torch.Tensor  # [P, 512] frozen passage vectors
    split: list[bool] = field(default_factory=list)  # True = held out
    held_pool: set = field(default_factory=set)  # rows of every passage of the held-out pairs (all their negatives)


def load_pairs(path: str, max_pairs: int | None) -> list[dict]:
    pairs = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.strip():
                pairs.append(json.loads(line))
                if max_pairs and len(pairs) >= max_pairs:
                    break
    return pairs


def frozen_vectors(texts: list[str], tokenizer: UseLiteTokenizer, model: UseLite, cache: Path | None) -> np.ndarray:
    """The original USE-lite's vectors of `texts` (passage budget), cached by sha1 of each text."""
    keys = [hashlib.sha1(t.encode('utf-8')).hexdigest() for t in texts]
    known: dict[str, np.ndarray] = {}
    if cache and (cache / 'keys.json').exists():
        ck = json.loads((cache / 'keys.json').read_text())
        cv = np.load(cache / 'vectors.npy', mmap_mode='r')
        index = {k: i for i, k in enumerate(ck)}
        for k in keys:
            if k in index:
                known[k] = np.array(cv[index[k]])  # a copy: the file is rewritten below, a memmap view would change
        del cv
    missing = sorted({k: t for k, t in zip(keys, texts) if k not in known}.items())
    if missing:
        t0 = time.time()
        ids = [tokenizer.encode(t)[:PASSAGE_TOKENS] for _, t in missing]
        with torch.no_grad():
            vecs = encode_ids(model, ids, batch_size=64).numpy()
        print(f'frozen passage vectors: {len(missing)} encoded in {time.time() - t0:.1f}s', file=sys.stderr)
        for (k, _), v in zip(missing, vecs):
            known[k] = v
        if cache:
            cache.mkdir(parents=True, exist_ok=True)
            all_keys = list(known)
            np.save(cache / 'vectors.npy', np.stack([known[k] for k in all_keys]).astype(np.float32))
            (cache / 'keys.json').write_text(json.dumps(all_keys))
    return np.stack([known[k] for k in keys]).astype(np.float32) if keys else np.zeros((0, DIM), np.float32)


def build_data(pairs: list[dict], tokenizer: UseLiteTokenizer, model: UseLite, cache: Path | None, per_kind: int, held_out: float, seed: int) -> Data:
    rows: dict[int, int] = {}
    texts: list[str] = []
    pkeys: list[set] = []

    def row(p: dict) -> int:
        pid = p['passageId']
        if pid not in rows:
            rows[pid] = len(texts)
            texts.append(passage_encoding_text(p))
            pkeys.append(passage_keys(p))
        return rows[pid]

    questions, positive, negatives, qkeys, kinds = [], [], [], [], []
    held = []
    for pair in pairs:
        questions.append(tokenizer.encode(pair['question'])[:QUESTION_TOKENS])
        positive.append(row(pair['positive']))
        negs = []
        for kind in NEGATIVE_KINDS:
            for p in (pair['negatives'].get(kind) or [])[:per_kind]:
                negs.append(row(p))
        negatives.append(negs)
        qkeys.append(question_keys(pair))
        kinds.append(pair['kind'])
        h = int(hashlib.sha1(f'{seed}:{pair["question"]}'.encode('utf-8')).hexdigest()[:8], 16) / 2**32
        held.append(h < held_out)
    # The held-out pool holds every passage of the held-out pairs, all negatives, not only the first per_kind.
    pool: set = set()
    for pair, h in zip(pairs, held):
        if h:
            pool.add(row(pair['positive']))
            for kind in NEGATIVE_KINDS:
                for p in pair['negatives'].get(kind) or []:
                    pool.add(row(p))
    vectors = torch.from_numpy(frozen_vectors(texts, tokenizer, model, cache))
    return Data(questions, positive, negatives, qkeys, pkeys, kinds, vectors, held, pool)


def answer_mask(qkeys: list[set], cand_keys: list[set]) -> torch.Tensor:
    """[Q, C] True where candidate c answers question q (to be masked unless it is q's target)."""
    by_key: dict = {}
    for c, keys in enumerate(cand_keys):
        for k in keys:
            by_key.setdefault(k, []).append(c)
    mask = torch.zeros((len(qkeys), len(cand_keys)), dtype=torch.bool)
    for q, keys in enumerate(qkeys):
        for k in keys:
            for c in by_key.get(k, ()):
                mask[q, c] = True
    return mask


def batch_loss(model: UseLite, data: Data, idx: list[int], temperature: float) -> torch.Tensor:
    cand: dict[int, int] = {}
    for i in idx:
        for r in [data.positive[i], *data.negatives[i]]:
            cand.setdefault(r, len(cand))
    rows = list(cand)
    target = torch.tensor([cand[data.positive[i]] for i in idx])
    mask = answer_mask([data.qkeys[i] for i in idx], [data.pkeys[r] for r in rows])
    mask[torch.arange(len(idx)), target] = False
    ids, am = pad_batch([data.questions[i] for i in idx])
    q = model(ids, am)
    logits = (q @ data.vectors[rows].T) / temperature
    logits = logits.masked_fill(mask, float('-inf'))
    return F.cross_entropy(logits, target)


@torch.no_grad()
def evaluate(model: UseLite, data: Data, idx: list[int]) -> dict:
    """Each question ranks its positive among every passage of the held-out pairs (answers of it masked)."""
    if not idx:
        return {}
    model.eval()
    rows = sorted(data.held_pool | {data.positive[i] for i in idx})
    col = {r: c for c, r in enumerate(rows)}
    q = encode_ids(model, [data.questions[i] for i in idx], batch_size=64)
    scores = q @ data.vectors[rows].T
    mask = answer_mask([data.qkeys[i] for i in idx], [data.pkeys[r] for r in rows])
    target = torch.tensor([col[data.positive[i]] for i in idx])
    mask[torch.arange(len(idx)), target] = False
    scores = scores.masked_fill(mask, float('-inf'))
    own = scores[torch.arange(len(idx)), target]
    rank = (scores > own.unsqueeze(1)).sum(1) + 1
    return {
        'questions': len(idx),
        'pool': len(rows),
        'recall@1': float((rank <= 1).float().mean()),
        'recall@10': float((rank <= 10).float().mean()),
        'mrr': float((1.0 / rank.float()).mean()),
    }


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def train(model: UseLite, data: Data, train_idx: list[int], held_idx: list[int], args, log=print) -> dict:
    """The training loop; returns the record (and leaves the best weights in `model`)."""
    params = {'all': lambda n: True, 'top': lambda n: n.startswith(('layer1.', 'tanh_')), 'head': lambda n: n.startswith('tanh_')}[args.train]
    trainable = []
    for n, p in model.named_parameters():
        p.requires_grad_(params(n))
        if p.requires_grad:
            trainable.append((n, p))
    origin = {n: p.detach().clone() for n, p in trainable} if args.l2sp > 0 else {}
    opt = torch.optim.AdamW([p for _, p in trainable], lr=args.lr, weight_decay=0.0)
    steps_per_epoch = math.ceil(len(train_idx) / args.batch_size)
    total = steps_per_epoch * args.epochs
    warmup = max(1, int(0.1 * total))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (total - s) / max(1, total - warmup)) if s >= warmup else (s + 1) / warmup)

    rng = random.Random(args.seed)
    before = evaluate(model, data, held_idx)
    log(f'held-out before: {json.dumps(before)}')
    best = (before.get('mrr', -1.0), 0, copy.deepcopy(model.state_dict()))
    curve, epochs = [], []
    t0 = time.time()
    stale = 0
    step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = train_idx[:]
        rng.shuffle(order)
        # Batches of similar question length (less padding), in random batch order.
        chunks = [order[i : i + args.batch_size * 20] for i in range(0, len(order), args.batch_size * 20)]
        batches = []
        for ch in chunks:
            ch.sort(key=lambda i: len(data.questions[i]))
            batches += [ch[i : i + args.batch_size] for i in range(0, len(ch), args.batch_size)]
        rng.shuffle(batches)
        running, n = 0.0, 0
        for b in batches:
            loss = batch_loss(model, data, b, args.temperature)
            if origin:
                loss = loss + args.l2sp * sum(((p - origin[name]) ** 2).sum() for name, p in trainable)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_([p for _, p in trainable], 1.0)
            opt.step()
            sched.step()
            step += 1
            running += float(loss.detach())
            n += 1
            if step % args.log_every == 0:
                curve.append({'step': step, 'epoch': epoch, 'loss': running / n, 'seconds': round(time.time() - t0, 1)})
                log(f'epoch {epoch} step {step}/{total} loss {running / n:.4f} ({time.time() - t0:.0f}s)')
                running, n = 0.0, 0
            if args.time_budget and time.time() - t0 > args.time_budget:
                break
        metrics = evaluate(model, data, held_idx)
        epochs.append({'epoch': epoch, 'seconds': round(time.time() - t0, 1), **metrics})
        log(f'held-out after epoch {epoch}: {json.dumps(metrics)}')
        if not metrics:  # nothing held out: keep the last epoch
            best = (best[0], epoch, None)
        elif metrics['mrr'] > best[0]:
            best = (metrics['mrr'], epoch, copy.deepcopy(model.state_dict()))
            stale = 0
        else:
            stale += 1
            if stale >= args.patience:
                log(f'early stop: no held-out MRR gain for {stale} epoch(s)')
                break
        if args.time_budget and time.time() - t0 > args.time_budget:
            log('time budget reached')
            break
    if best[2] is not None:
        model.load_state_dict(best[2])
    return {
        'before': before,
        'epochs': epochs,
        'bestEpoch': best[1],
        'after': next((e for e in epochs if e['epoch'] == best[1]), before),
        'lossCurve': curve,
        'trainSeconds': round(time.time() - t0, 1),
        'steps': step,
        'trainableParameters': sum(p.numel() for _, p in trainable),
    }


def main() -> int:
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('pairs')
    ap.add_argument('out_dir')
    ap.add_argument('--name', default='use-lite-q-ft')
    ap.add_argument('--cache', help='folder for the frozen passage vectors (reused across runs)')
    ap.add_argument('--max-pairs', type=int)
    ap.add_argument('--negatives-per-kind', type=int, default=4)
    ap.add_argument('--held-out', type=float, default=0.1)
    ap.add_argument('--batch-size', type=int, default=64)
    ap.add_argument('--epochs', type=int, default=3)
    ap.add_argument('--patience', type=int, default=1)
    ap.add_argument('--lr', type=float, default=5e-5)
    ap.add_argument('--temperature', type=float, default=0.05)
    ap.add_argument('--l2sp', type=float, default=0.0, help='weight of Σ‖θ−θ₀‖² (0: off)')
    ap.add_argument('--train', choices=['all', 'top', 'head'], default='all', help='all weights; layer 1 + tanh; tanh layer only')
    ap.add_argument('--time-budget', type=float, default=0, help='stop training after this many seconds (0: none)')
    ap.add_argument('--log-every', type=int, default=20)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--save-weights', action='store_true', help='also write OUT_DIR/weights.pt (state_dict)')
    args = ap.parse_args()
    torch.manual_seed(args.seed)

    t_start = time.time()
    tokenizer = UseLiteTokenizer.from_model_dir()
    frozen = UseLite.load().eval()
    pairs = load_pairs(args.pairs, args.max_pairs)
    data = build_data(pairs, tokenizer, frozen, Path(args.cache) if args.cache else None, args.negatives_per_kind, args.held_out, args.seed)
    del frozen
    train_idx = [i for i, h in enumerate(data.split) if not h]
    held_idx = [i for i, h in enumerate(data.split) if h]
    kinds: dict[str, int] = {}
    for k in data.kinds:
        kinds[k] = kinds.get(k, 0) + 1
    print(f'{len(pairs)} pairs ({kinds}): {len(train_idx)} train, {len(held_idx)} held out; {len(data.pkeys)} frozen passages', file=sys.stderr)
    prep = time.time() - t_start

    model = UseLite.load()
    record = train(model, data, train_idx, held_idx, args, log=lambda s: print(s, file=sys.stderr))
    from export import export_folder

    out = export_folder(model, args.out_dir, args.name)
    if args.save_weights:
        torch.save(model.state_dict(), out / 'weights.pt')
    record = {
        'name': args.name,
        'pairsFile': str(Path(args.pairs).resolve()),
        'pairs': len(pairs),
        'kinds': kinds,
        'trainPairs': len(train_idx),
        'heldOutPairs': len(held_idx),
        'frozenPassages': len(data.pkeys),
        'settings': {k: v for k, v in vars(args).items() if k not in ('pairs', 'out_dir')},
        'preparationSeconds': round(prep, 1),
        **record,
        'peakRssMB': round(peak_rss_mb(), 1),
        'torchThreads': torch.get_num_threads(),
        'roles': 'trained for questionPassage (passages frozen = use-lite); documents were not part of the objective',
    }
    (out / 'training-record.json').write_text(json.dumps(record, indent=2, ensure_ascii=False) + '\n')
    print(json.dumps({k: record[k] for k in ('pairs', 'trainPairs', 'heldOutPairs', 'before', 'after', 'bestEpoch', 'trainSeconds', 'peakRssMB')}, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
