"""A UseLite module → a DHR custom model folder (src/encoders/transformer/):

  model.onnx       inputs input_ids, attention_mask int64 [batch, seq]; output sentence_embedding
                   float32 [batch, 512], L2-normalized (DHR uses a rank-2 "sentence_embedding" as is)
  tokenizer.json   USE-lite's vocabulary as a HuggingFace Unigram tokenizer (tokenizer_json.py)
  dhr-model.json   {"name", "pooling": "mean", "normalize": true}; budgets are DHR's defaults,
                   capped at 128 by tokenizer.json's truncation, as for use-lite itself

  python3 training/export.py OUT_DIR [--name use-lite-q] [--weights finetuned.pt]

Without --weights it exports the original USE-lite (the parity check's subject).
"""
from __future__ import annotations

import argparse
import json
import os
import warnings
from pathlib import Path

import torch

from tokenizer_json import write_tokenizer_json
from use_lite import DEFAULT_MODEL_DIR, UseLite

OPSET = 17


def export_onnx(model: UseLite, path: str | os.PathLike) -> None:
    model = model.eval()
    ids = torch.tensor([[10, 20, 30, 40], [50, 60, 0, 0]], dtype=torch.int64)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=torch.int64)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter('ignore')
        torch.onnx.export(
            model,
            (ids, mask),
            str(path),
            input_names=['input_ids', 'attention_mask'],
            output_names=['sentence_embedding'],
            dynamic_axes={'input_ids': {0: 'batch', 1: 'sequence'}, 'attention_mask': {0: 'batch', 1: 'sequence'}, 'sentence_embedding': {0: 'batch'}},
            opset_version=OPSET,
            dynamo=False,
        )


def export_folder(model: UseLite, out_dir: str | os.PathLike, name: str, model_dir: str | os.PathLike = DEFAULT_MODEL_DIR) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    export_onnx(model, out / 'model.onnx')
    write_tokenizer_json(out / 'tokenizer.json', model_dir)
    (out / 'dhr-model.json').write_text(json.dumps({'name': name, 'pooling': 'mean', 'normalize': True}, indent=2) + '\n')
    return out


def load_model(weights: str | None = None) -> UseLite:
    model = UseLite.load()
    if weights:
        model.load_state_dict(torch.load(weights, map_location='cpu'))
    return model.eval()


if __name__ == '__main__':
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out_dir')
    ap.add_argument('--name', default='use-lite-q')
    ap.add_argument('--weights', help='a state_dict saved by finetune.py (default: the original USE-lite)')
    a = ap.parse_args()
    print(f'wrote {export_folder(load_model(a.weights), a.out_dir, a.name)}')
