"""A fine-tuned folder through the product's loader: does it load, do its question vectors differ from
use-lite's, and does its model.onnx reproduce the PyTorch weights it was exported from?

  python3 training/compare_folder.py FOLDER PAIRS.jsonl [--n 300] [--weights FOLDER/weights.pt]

Takes the first N questions of PAIRS.jsonl, runs training/reference.ts (UseLiteEncoder and
TransformerEncoder.load(FOLDER), role questionPassage) and prints cosine(use-lite, folder) and,
with --weights, max |diff| between the folder (through the product) and UseLite + those weights.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

from use_lite import REPO, UseLite, encode_ids


def main() -> int:
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser()
    ap.add_argument('folder')
    ap.add_argument('pairs')
    ap.add_argument('--n', type=int, default=300)
    ap.add_argument('--weights')
    a = ap.parse_args()
    texts = []
    for line in Path(a.pairs).read_text().splitlines():
        if line.strip():
            texts.append(json.loads(line)['question'])
    step = max(1, len(texts) // a.n)
    texts = texts[::step][: a.n]
    work = Path(tempfile.mkdtemp(prefix='dhr-folder-'))
    (work / 'in.json').write_text(json.dumps(texts, ensure_ascii=False))
    subprocess.run(['npx', 'tsx', 'training/reference.ts', str(work / 'in.json'), str(work / 'out.json'), '--role', 'questionPassage', '--folder', str(Path(a.folder).resolve())], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    ref = json.loads((work / 'out.json').read_text())
    u = np.asarray(ref['vectors'], np.float32)
    f = np.asarray(ref['folderVectors'], np.float32)
    cos = (u * f).sum(1)
    out = {
        'folder': a.folder,
        'name': ref['folderName'],
        'dimension': ref['folderDimension'],
        'texts': len(texts),
        'cosineUseLiteVsFolder': {'min': float(cos.min()), 'mean': float(cos.mean()), 'max': float(cos.max())},
    }
    if a.weights:
        model = UseLite.load()
        model.load_state_dict(torch.load(a.weights, map_location='cpu'))
        agree = [x[:80] == y[:80] for x, y in zip(ref['ids'], ref['folderIds'])]
        with torch.no_grad():
            t = encode_ids(model.eval(), [x[:80] for x in ref['ids']]).numpy()
        d = np.abs(t - f).max(1)[np.array(agree)]
        out['folderVsTorchWeights'] = {'textsWithSameIds': int(sum(agree)), 'maxAbsDiff': float(d.max())}
    print(json.dumps(out, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
