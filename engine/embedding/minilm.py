"""The bundled all-MiniLM-L6-v2 on the CPU without sentence-transformers: the same BERT encoder,
mean pooling and unit length, computed by torch's functional operations in the order
transformers' BertModel computes them, so the vectors are those sentence-transformers gives, bit
for bit (tests/test_minilm.py compares them). What it saves is the import: sentence-transformers
brings in transformers' model classes, about 4 s before the first answer is read on a 2-core
machine, where torch and the Rust tokenizer take about 1 s (docs/explanation/speed.md).

Used by engine.embedding.models for the bundled model on the CPU when its folder is the model
this module knows (`readable`); any other model, device or folder loads with sentence-transformers.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# What the bundled folder must say for this encoder to be the model it describes.
MODULES = (
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
)
ARCHITECTURE = {"model_type": "bert", "hidden_act": "gelu", "position_embedding_type": "absolute"}
POOLING = {
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
FILES = ("config.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json",
         "tokenizer.json", "model.safetensors")  # fmt: skip


def readable(folder: Path) -> bool:
    """Whether `folder` holds a model this encoder computes as sentence-transformers does: a
    BERT with GELU and absolute positions, mean pooling, unit length, a fast tokenizer and
    safetensors weights."""
    try:
        if not all((folder / name).is_file() for name in FILES):
            return False
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        pooling = json.loads((folder / "1_Pooling/config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        tuple(m.get("type") for m in modules) == MODULES
        and all(config.get(key, value) == value for key, value in ARCHITECTURE.items())
        and all(pooling.get(key) == value for key, value in POOLING.items())
    )


class Tokenizer:
    """The part of transformers' fast tokenizer that engine.embedding.reading calls: word
    pieces with or without the special tokens, never cut, their character offsets and words."""

    is_fast = True

    def __init__(self, raw) -> None:
        self._raw = raw

    def __call__(self, text, add_special_tokens: bool = True, truncation: bool = False,
                 return_offsets_mapping: bool = False, verbose: bool = True):  # fmt: skip
        if truncation:
            raise ValueError("this tokenizer is only asked for whole texts")
        if isinstance(text, str):
            return _Encoded(self._raw.encode(text, add_special_tokens=add_special_tokens))
        encoded = self._raw.encode_batch(list(text), add_special_tokens=add_special_tokens)
        return {"input_ids": [e.ids for e in encoded]}


class _Encoded(dict):
    def __init__(self, encoding) -> None:
        super().__init__(input_ids=encoding.ids, offset_mapping=encoding.offsets)
        self._words = encoding.word_ids

    def word_ids(self) -> list[int | None]:
        return list(self._words)


class MiniLM:
    """A sentence encoder with sentence-transformers' `encode` for the texts the engine gives it:
    (n, 384) float32 unit vectors, the texts batched longest first as sentence-transformers
    batches them (batching decides the padding, which can move a vector's last bits)."""

    device = "cpu"

    def __init__(self, folder: Path) -> None:
        import torch
        from safetensors import safe_open
        from tokenizers import Tokenizer as Raw

        self.config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        limits = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self.max_seq_length = int(limits["max_seq_length"])
        whole = Raw.from_file(str(folder / "tokenizer.json"))
        whole.no_truncation()
        whole.no_padding()
        self.tokenizer = Tokenizer(whole)
        # The file's own settings (cut at 128, padded to 128) are not the model's: sentence-
        # transformers cuts at max_seq_length and pads to the batch's longest text.
        self._batch = Raw.from_file(str(folder / "tokenizer.json"))
        self._batch.enable_truncation(self.max_seq_length)
        self._batch.enable_padding(pad_id=self.config.get("pad_token_id", 0), pad_token="[PAD]")
        with safe_open(str(folder / "model.safetensors"), framework="pt") as weights:
            self._w = {k.removeprefix("bert."): weights.get_tensor(k) for k in weights.keys()}  # noqa: SIM118 - safe_open is not a mapping
        self._torch = torch

    def encode(self, texts: list[str], batch_size: int = 32, convert_to_numpy: bool = True,
               show_progress_bar: bool = False) -> np.ndarray:  # fmt: skip
        """(len(texts), d) float32 unit vectors in the order given."""
        torch = self._torch
        # sentence-transformers' order: by decreasing length in characters, numpy's default sort.
        order = np.argsort([-len(text) for text in texts])
        out = np.empty((len(texts), self.config["hidden_size"]), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            chosen = order[start : start + batch_size]
            encoded = self._batch.encode_batch([texts[i] for i in chosen])
            ids = torch.tensor([e.ids for e in encoded], dtype=torch.long)
            mask = torch.tensor([e.attention_mask for e in encoded], dtype=torch.long)
            out[chosen] = self._forward(ids, mask).numpy()
        return out

    def _forward(self, ids, mask):
        torch = self._torch
        functional = torch.nn.functional
        w, config = self._w, self.config
        eps, width = config["layer_norm_eps"], config["hidden_size"]
        heads = config["num_attention_heads"]
        n, length = ids.shape
        size = width // heads

        def norm(x, name):
            return functional.layer_norm(x, (width,), w[name + ".weight"], w[name + ".bias"], eps)

        def linear(x, name):
            return functional.linear(x, w[name + ".weight"], w[name + ".bias"])

        def split(x):
            return x.view(n, length, -1, size).transpose(1, 2)

        with torch.inference_mode():
            # Each sum in BertEmbeddings' order: word + token type, then + position.
            x = w["embeddings.word_embeddings.weight"][ids]
            x = x + w["embeddings.token_type_embeddings.weight"][torch.zeros_like(ids)]
            x = x + w["embeddings.position_embeddings.weight"][:length][None]
            x = norm(x, "embeddings.LayerNorm")
            # transformers' SDPA path: a boolean mask of the keys to attend, none where no text
            # of the batch is padded.
            keys = None if bool(mask.all()) else mask[:, None, None, :].bool().expand(n, 1, length, length)  # fmt: skip
            for layer in range(config["num_hidden_layers"]):
                p = f"encoder.layer.{layer}."
                attended = functional.scaled_dot_product_attention(
                    split(linear(x, p + "attention.self.query")),
                    split(linear(x, p + "attention.self.key")),
                    split(linear(x, p + "attention.self.value")),
                    attn_mask=keys,
                    dropout_p=0.0,
                    scale=size**-0.5,
                )
                attended = attended.transpose(1, 2).contiguous().reshape(n, length, -1)
                x = norm(linear(attended, p + "attention.output.dense") + x,
                         p + "attention.output.LayerNorm")  # fmt: skip
                inner = functional.gelu(linear(x, p + "intermediate.dense"))
                x = norm(linear(inner, p + "output.dense") + x, p + "output.LayerNorm")
            # sentence-transformers' Pooling (mean over the text's tokens), then Normalize.
            counted = mask.unsqueeze(-1).expand(x.size()).to(x.dtype)
            pooled = torch.sum(x * counted, 1) / torch.clamp(counted.sum(1), min=1e-9)
            return functional.normalize(pooled, p=2, dim=1)
