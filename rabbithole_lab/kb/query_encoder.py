"""An ONNX copy of the embedder for search queries: a `rabbithole search` answers without importing torch.

Importing sentence-transformers (torch, transformers, scikit-learn) takes most of a command's start-up,
while embedding one query needs only the network. The first time the sentence-transformers model is
loaded in full (any ingest or research), it is exported to ONNX once per machine — its transformer
with mean pooling and normalisation in the graph — and the copy is kept only if it embeds a probe
text like the original (cosine ≥ 0.9999). Later queries run through onnxruntime and the model's own
`tokenizer.json`. Models of another shape (no mean pooling, no normalisation, no fast tokenizer) get
no copy and keep the sentence-transformers path. Nothing is downloaded: the copy is made from the
local model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import threading
import warnings
from pathlib import Path

import numpy as np

logger = logging.getLogger(__name__)

ONNX_FILE = "model.onnx"
META_FILE = "encoder.json"
TOKENIZER_FILE = "tokenizer.json"
PROBE_TEXT = "Welche Pflichten hat der Betreiber einer Anlage nach § 12? Which duties apply?"
MIN_PROBE_COSINE = 0.9999
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "rabbithole-lab" / "query-encoders"


def cache_root(setting: str) -> Path | None:
    """The folder of the query encoders, or None when the setting is 'off'."""
    if setting.strip().lower() == "off":
        return None
    return Path(setting).expanduser() if setting.strip() else default_cache_dir()


def model_fingerprint(model_dir: Path) -> str:
    """The model files' identity: names, sizes and modification times (hashing 90 MB of weights at every
    start would cost what the copy saves)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(model_dir).rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(model_dir)}:{stat.st_size}:{int(stat.st_mtime)}".encode())
    return digest.hexdigest()[:16]


def encoder_dir(root: Path, model_dir: Path) -> Path:
    return root / model_fingerprint(model_dir)


class OnnxQueryEncoder:
    """Embeds queries with the ONNX copy; the vectors are those of the sentence-transformers model."""

    def __init__(self, onnx_file: Path, tokenizer_file: Path, max_seq_length: int):
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(max_seq_length)
        self._tokenizer.no_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = max(1, min(4, os.cpu_count() or 1))
        self._session = onnxruntime.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
        self._lock = threading.Lock()

    @classmethod
    def from_folder(cls, folder: Path) -> OnnxQueryEncoder:
        meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
        return cls(folder / ONNX_FILE, folder / meta["tokenizer"], int(meta["max_seq_length"]))

    def encode(self, text: str) -> np.ndarray:
        encoding = self._tokenizer.encode(text)
        feed = {"input_ids": encoding.ids, "attention_mask": encoding.attention_mask,
                "token_type_ids": encoding.type_ids}
        with self._lock:
            vector = self._session.run(None, {name: np.asarray([value], dtype=np.int64) for name, value in feed.items()})
        return np.asarray(vector[0][0], dtype=np.float32)


def load_encoder(root: Path | None, model_dir: Path | None) -> OnnxQueryEncoder | None:
    """The copy for `model_dir` when one was made and checked, else None (the caller loads the full model)."""
    if root is None or model_dir is None:
        return None
    folder = encoder_dir(root, model_dir)
    if not (folder / META_FILE).is_file() or not (folder / ONNX_FILE).is_file():
        return None
    try:
        return OnnxQueryEncoder.from_folder(folder)
    except Exception as exc:  # a damaged copy is no reason to fail a search: the full model answers
        logger.warning("Query encoder in %s unusable (%s); using the full embedding model", folder, exc)
        return None


def _mean_pooled_and_normalised(model) -> bool:
    """True for a sentence-transformers model of Transformer -> mean Pooling (-> Normalize)."""
    modules = list(model)
    if len(modules) < 2 or type(modules[0]).__name__ != "Transformer" or type(modules[1]).__name__ != "Pooling":
        return False
    pooling = modules[1]
    mode = getattr(pooling, "pooling_mode", None)  # sentence-transformers 5: "mean"; before: one flag per mode
    if mode is not None:
        mean_only = mode == "mean" or list(mode) == ["mean"]
    else:
        mean_only = getattr(pooling, "pooling_mode_mean_tokens", False) and not any(
            getattr(pooling, name, False) for name in ("pooling_mode_cls_token", "pooling_mode_max_tokens",
                                                       "pooling_mode_mean_sqrt_len_tokens"))
    rest = [type(module).__name__ for module in modules[2:]]
    return bool(mean_only) and rest in ([], ["Normalize"])


def export_encoder(model, model_dir: Path, root: Path | None) -> Path | None:
    """Export `model` (a loaded SentenceTransformer read from `model_dir`) once; returns the folder of the
    checked copy, or None when the model is of another shape, the exporter is missing or the copy differs."""
    if root is None or not _mean_pooled_and_normalised(model):
        return None
    tokenizer_file = Path(model_dir) / "tokenizer.json"
    if not tokenizer_file.is_file():
        return None
    folder = encoder_dir(root, model_dir)
    if (folder / META_FILE).is_file():
        return folder
    try:
        import torch

        transformer = model[0].auto_model.eval()

        class Pooled(torch.nn.Module):
            def __init__(self, network):
                super().__init__()
                self.network = network

            def forward(self, input_ids, attention_mask, token_type_ids):
                hidden = self.network(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids).last_hidden_state
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(pooled, p=2, dim=1)

        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f"{ONNX_FILE}.{os.getpid()}.part"
        example = tuple(torch.ones((1, 8), dtype=torch.long) if name != "token_type_ids"
                        else torch.zeros((1, 8), dtype=torch.long) for name in INPUTS)
        axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")  # the exporter's notes on opsets are not the user's business
            torch.onnx.export(Pooled(transformer), example, str(partial), input_names=list(INPUTS),
                              output_names=["embedding"], dynamic_axes=axes, opset_version=17, dynamo=False)
        os.replace(partial, folder / ONNX_FILE)
        # the copy keeps its own tokenizer: the model's folder may go with the environment it came from
        shutil.copyfile(tokenizer_file, folder / TOKENIZER_FILE)
        copy = OnnxQueryEncoder(folder / ONNX_FILE, folder / TOKENIZER_FILE, int(model.max_seq_length))
        expected = model.encode([PROBE_TEXT], normalize_embeddings=True, convert_to_numpy=True)[0]
        cosine = float(np.dot(copy.encode(PROBE_TEXT), expected))
        if cosine < MIN_PROBE_COSINE:
            logger.warning("ONNX query encoder differs from the model (cosine %.6f); not used", cosine)
            return None
        # the meta file comes last: only a checked copy is ever loaded
        meta = {"tokenizer": TOKENIZER_FILE, "max_seq_length": int(model.max_seq_length), "probe_cosine": cosine}
        partial_meta = folder / f"{META_FILE}.{os.getpid()}.part"
        partial_meta.write_text(json.dumps(meta), encoding="utf-8")
        os.replace(partial_meta, folder / META_FILE)
        logger.info("Query encoder exported to %s", folder)
        return folder
    except Exception as exc:  # no exporter (package onnx missing), no disk space, ...: the full model serves
        logger.info("No ONNX query encoder for %s: %s", model_dir, exc)
        return None
