"""Parity check: the PyTorch USE-lite and its exported folder reproduce the project's USE-lite.

  python3 training/parity.py [--folder DIR] [--texts N_VEC] [--token-texts N_TOK] [--out report.json]

What it compares (the reference side always comes from the project's own TypeScript code, run by
training/reference.ts through `npx tsx`):
  0. the Python port of the project's tokenizer (use_lite_tokenizer.py, used by finetune.py) must
                 give the project's ids on every text.
  1. tokenizer   tokenizer.json through the product's TextTokenizer (@huggingface/tokenizers) vs
                 the project's UseLiteTokenizer, on N_TOK texts (real passages + edge cases):
                 share of texts whose id sequences are identical, and the differing examples.
  2. torch       UseLite (use_lite.py) on the project's token ids vs UseLiteEncoder's vectors.
  3. onnx        the exported model.onnx on onnxruntime (python) on the project's token ids.
  4. product     TransformerEncoder.load(folder) end to end (its own tokenizer) vs UseLiteEncoder,
                 split into texts whose ids agree (must match to float precision) and those whose
                 ids differ (reported: the cost of the tokenizer differences).
Vectors use the role "passage" (128-token budget) on all N_TOK texts and "questionPassage" (80 tokens)
on N_VEC of them.

Exit status: 0 when 0 is exact, 2, 3 and 4-with-agreeing-ids all have max |diff| <= --tol (default 1e-5) and
min cosine >= 1 - --tol, and token agreement >= --min-token-agreement (default 0.99); 1 otherwise.
Without --folder the untrained model is exported to a temporary folder first.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from use_lite import REPO, UseLite, encode_ids
from use_lite_tokenizer import UseLiteTokenizer

EDGE_CASES = [
    '', ' ', '  ', 'a', 'hello', '  leading spaces', 'trailing spaces  ', 'double  space', 'tab\tseparated\tcolumns',
    'new\nline\n\nparagraph', 'Ünïcödé café naïve façade', '東京は日本の首都です。', 'emoji 😀 test 👍🏽 done',
    '🙂🙂🙂 three unknown in a row', 'ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３', 'ﬁnance ﬂow (ligatures)', 'x² + y³ = z¹⁰', 'C++ and C#: what is the difference?',
    'https://example.com/path?q=1&r=2', 'smiley :-) and :( and :)', 'nbsp\u00a0between\u00a0words', 'zero\u200bwidth\u200bspace',
    '∑∫√∞ ≤ ≥ ≠ → ⇒', 'Привет, как дела?', 'Καλημέρα κόσμε', 'مرحبا بالعالم', 'שלום עולם', 'नमस्ते दुनिया',
    'control\u0007char', '\u2581already a meta space', 'ALL CAPS SHOUTING TEXT', 'MiXeD CaSe WoRdS', '1234567890 3.14159 -42 1e-9',
    "it's don't won't y'all", '"quoted" «guillemets» „low“ ‘single’', 'a/b\\c|d_e-f+g=h', 'e-mail: someone@example.org',
    'Norway › Geography › Climate', 'def f(x):\n    return x ** 2  # square', '<html><body>tag soup</body></html>',
    ' '.join(['word'] * 300), ' '.join(f'tok{i}' for i in range(200)), 'x' * 1000, '🙂' * 50,
]


def factbook_texts(path: Path, rng: random.Random, n: int) -> list[str]:
    """Passages of the Factbook corpus file (training/factbook-json.ts output), cut to <= 100 words."""
    docs = json.loads(path.read_text())
    out: list[str] = []

    def walk(title_path: list[str], node: dict) -> None:
        text = node.get('text') or node.get('abstract')
        if text:
            words = text.split()
            for s in range(0, len(words), 100):
                out.append(', '.join(title_path) + ', ' + ' '.join(words[s : s + 100]))
        for sec in node.get('sections', []) or []:
            walk(title_path + [sec.get('title', '')], sec)

    for d in docs:
        walk([d['title']], d)
    rng.shuffle(out)
    return out[:n]


def markdown_texts(rng: random.Random, n: int) -> list[str]:
    """Paragraphs of the repository's own Markdown (code, tables, symbols): varied non-prose text."""
    paras: list[str] = []
    for f in sorted((REPO / 'docs').rglob('*.md')) + [REPO / 'README.md']:
        paras += [p.strip() for p in re.split(r'\n\s*\n', f.read_text(errors='replace')) if p.strip()]
    rng.shuffle(paras)
    return paras[:n]


def pairs_texts(path: Path, rng: random.Random, n: int) -> list[str]:
    """Questions and passage texts (title path + text) of a pairs JSONL."""
    out: list[str] = []
    for line in path.read_text().splitlines():
        p = json.loads(line)
        out.append(p['question'])
        pos = p['positive']
        out.append(', '.join(pos['titlePath']) + ', ' + pos['text'])
    rng.shuffle(out)
    return out[:n]


def run_reference(texts: list[str], role: str, folder: Path, work: Path) -> dict:
    inp, outp = work / f'texts-{role}.json', work / f'ref-{role}.json'
    inp.write_text(json.dumps(texts, ensure_ascii=False))
    cmd = ['npx', 'tsx', 'training/reference.ts', str(inp), str(outp), '--role', role, '--folder', str(folder)]
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    return json.loads(outp.read_text())


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    if len(a) == 0:
        return {'texts': 0}
    diff = np.abs(a - b).max(axis=1)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {'texts': int(len(a)), 'maxAbsDiff': float(diff.max()), 'meanMaxAbsDiff': float(diff.mean()), 'minCosine': float(cos.min()), 'meanCosine': float(cos.mean())}


def onnx_vectors(model_path: Path, ids: list[list[int]], limit: int) -> np.ndarray:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(str(model_path), so)
    out = np.zeros((len(ids), 512), np.float32)
    for i, row in enumerate(ids):  # one text a run: no padding at all, a different path from torch's batches
        row = row[:limit] or []
        S = max(1, len(row))
        x = np.zeros((1, S), np.int64)
        m = np.zeros((1, S), np.int64)
        x[0, : len(row)] = row
        m[0, : len(row)] = 1
        out[i] = sess.run(['sentence_embedding'], {'input_ids': x, 'attention_mask': m})[0][0]
    return out


def main() -> int:
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--folder', help='an exported folder (default: export the untrained model to a temp folder)')
    ap.add_argument('--texts', type=int, default=400, help='texts for the questionPassage-role comparisons')
    ap.add_argument('--token-texts', type=int, default=3000, help='texts for the token-id and passage-role comparisons')
    ap.add_argument('--factbook', default='/tmp/train-store/factbook.json', help='training/factbook-json.ts output (real passages)')
    ap.add_argument('--pairs', help='a pairs JSONL: its questions and positives join the texts')
    ap.add_argument('--tol', type=float, default=1e-5)
    ap.add_argument('--min-token-agreement', type=float, default=0.99)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--out', help='write the report JSON here')
    a = ap.parse_args()

    rng = random.Random(a.seed)
    work = Path(tempfile.mkdtemp(prefix='dhr-parity-'))
    folder = Path(a.folder) if a.folder else None
    if folder is None:
        from export import export_folder

        folder = export_folder(UseLite.load(), work / 'use-lite-untrained', 'use-lite-untrained')

    real: list[str] = []
    if Path(a.factbook).exists():
        real += factbook_texts(Path(a.factbook), rng, a.token_texts)
    if a.pairs:
        real += pairs_texts(Path(a.pairs), rng, a.token_texts // 3)
    real += markdown_texts(rng, a.token_texts // 3)
    rng.shuffle(real)
    token_texts = EDGE_CASES + real[: max(0, a.token_texts - len(EDGE_CASES))]
    # Question-role texts: every edge case plus a sample of the rest (the passage role uses all texts).
    vec_texts = EDGE_CASES + rng.sample(token_texts[len(EDGE_CASES) :], max(0, min(a.texts - len(EDGE_CASES), len(token_texts) - len(EDGE_CASES))))

    model = UseLite.load().eval()
    report: dict = {'folder': str(folder), 'passageTexts': len(token_texts), 'questionTexts': len(vec_texts)}
    ok = True

    # 1. tokens, on every text; the passage run also gives the product's vectors for all of them, so the
    # cost of each tokenizer difference is measured too.
    ref_p = run_reference(token_texts, 'passage', folder, work)
    src = ref_p
    same = [x == y for x, y in zip(src['ids'], src['folderIds'])]
    examples = []
    for t, x, y, s in zip(token_texts, src['ids'], src['folderIds'], same):
        if not s and len(examples) < 20:
            k = next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
            examples.append({'text': t[:120], 'project': x[max(0, k - 2) : k + 4], 'folder': y[max(0, k - 2) : k + 4], 'at': k, 'lengths': [len(x), len(y)]})
    total_ids = sum(len(x) for x in src['ids'])
    same_ids = sum(sum(1 for p, q in zip(x, y) if p == q) if len(x) == len(y) else 0 for x, y in zip(src['ids'], src['folderIds']))
    report['tokens'] = {
        'texts': len(same),
        'identicalSequences': int(sum(same)),
        'agreement': sum(same) / len(same),
        'sameLengthSequences': int(sum(len(x) == len(y) for x, y in zip(src['ids'], src['folderIds']))),
        'positionsEqualInSameLengthSequences': same_ids / max(1, total_ids),
        'differing': examples,
    }
    if report['tokens']['agreement'] < a.min_token_agreement:
        ok = False
    # The Python port finetune.py tokenizes with must be exact (it makes the frozen passage vectors).
    port = UseLiteTokenizer.from_model_dir()
    port_same = sum(port.encode(t) == x for t, x in zip(token_texts, src['ids']))
    report['pythonTokenizer'] = {'texts': len(token_texts), 'identicalSequences': int(port_same)}
    if port_same != len(token_texts):
        ok = False

    for role, ref in (('passage', ref_p), ('questionPassage', run_reference(vec_texts, 'questionPassage', folder, work))):
        proj = np.asarray(ref['vectors'], np.float32)
        limit = ref['maxTokens']
        ids = [x[:limit] for x in ref['ids']]
        with torch.no_grad():
            tv = encode_ids(model, ids, batch_size=32).numpy()
        ov = onnx_vectors(folder / 'model.onnx', ids, limit)
        fv = np.asarray(ref['folderVectors'], np.float32)
        agree = np.array([x[:limit] == y[:limit] for x, y in zip(ref['ids'], ref['folderIds'])])
        r = {
            'maxTokens': limit,
            'folderMaxTokens': ref['folderMaxTokens'],
            'torch': compare(tv, proj),
            'onnx': compare(ov, proj),
            'productSameIds': compare(fv[agree], proj[agree]),
            'productDifferentIds': compare(fv[~agree], proj[~agree]),
        }
        report[role] = r
        for k in ('torch', 'onnx', 'productSameIds'):
            c = r[k]
            if c['texts'] and (c['maxAbsDiff'] > a.tol or c['minCosine'] < 1 - a.tol):
                ok = False
        if ref['folderMaxTokens'] != limit:
            ok = False

    report['ok'] = ok
    text = json.dumps(report, indent=2, ensure_ascii=False)
    if a.out:
        Path(a.out).write_text(text + '\n')
    print(text)
    print('PARITY OK' if ok else 'PARITY FAILED', file=sys.stderr)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
