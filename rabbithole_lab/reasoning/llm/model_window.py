"""How much one call to the model may hold: the model's own context length, read from Ollama, and the window
every call is sized to.

Ollama never says that a prompt was too long: a prompt past `num_ctx` loses its beginning, where our prompts
put the task and the rules. So the window is the smaller of what the model was trained to (`/api/show`:
`model_info["<arch>.context_length"]`) and OLLAMA_NUM_CTX, sent as `num_ctx` with every call, and a prompt is
sized in characters from a per-language count of characters per token measured with real tokenizers
(`bench/tokens.py`, bench/results/tokens.json: the densest 5 % of German law text runs 2.5 characters a token
with Qwen3, English rulebook text 2.9), leaving room for the answer.
"""

from __future__ import annotations

import logging
import urllib.error
from dataclasses import dataclass

from rabbithole_lab.reasoning.llm.provider import ollama_json
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)

# bench/results/tokens.json, the conservative (5th-percentile) value of Qwen3 and Llama 3.1, rounded down
PROMPT_CHARS_PER_TOKEN = {"de": 2.5, "en": 2.8}
DENSEST_CHARS_PER_TOKEN = min(PROMPT_CHARS_PER_TOKEN.values())  # a prompt mixes languages: the densest counts


@dataclass(frozen=True)
class ModelWindow:
    """The model a call goes to and what one call may hold."""

    model: str
    family: str  # "qwen3", "llama" … ("" when Ollama did not say)
    context_tokens: int | None  # what the model was trained to; None when Ollama did not say
    window_tokens: int  # sent as num_ctx with every call
    answer_tokens: int  # kept free for the answer
    safe_share: float  # of the window a prompt and its answer may fill (room for the chat template)

    @property
    def prompt_tokens(self) -> int:
        return max(256, int(self.window_tokens * self.safe_share) - self.answer_tokens)

    @property
    def prompt_chars(self) -> int:
        """The longest prompt, in characters, that fits the window in any language measured."""
        return int(self.prompt_tokens * DENSEST_CHARS_PER_TOKEN)

    def describe(self) -> str:
        trained = f"context {self.context_tokens:,} tokens" if self.context_tokens else "context length not reported"
        family = f" ({self.family})" if self.family else ""
        return (f"{self.model}{family}: {trained}; window {self.window_tokens:,} tokens (num_ctx), prompts up to "
                f"{self.prompt_chars:,} characters, {self.answer_tokens:,} tokens kept for the answer")


def read_model_window(settings: Settings, model: str) -> ModelWindow:
    """The window for `model`: min(its context length, OLLAMA_NUM_CTX). A server that does not say (an older
    Ollama, a proxy) leaves OLLAMA_NUM_CTX, with a warning in the log."""
    family, trained = _show(settings, model)
    configured = settings.ollama.num_ctx
    window = min(trained, configured) if trained else configured
    if trained is None:
        logger.warning("Ollama did not report the context length of %s; calls are sized to OLLAMA_NUM_CTX=%d",
                       model, configured)
    return ModelWindow(model, family, trained, window, settings.ollama.answer_tokens, settings.ollama.safe_limit)


def _show(settings: Settings, model: str) -> tuple[str, int | None]:
    """(family, context length) from POST /api/show on the configured host."""
    try:
        payload = ollama_json(settings, "/api/show", {"model": model})
    except (urllib.error.URLError, OSError, ValueError) as exc:  # includes an HTTP error and JSON that is not
        logger.info("/api/show for %s gave no answer (%s)", model, getattr(exc, "reason", exc))
        return "", None
    if not isinstance(payload, dict):
        return "", None
    details = payload.get("details") if isinstance(payload.get("details"), dict) else {}
    info = payload.get("model_info") if isinstance(payload.get("model_info"), dict) else {}
    family = str(details.get("family") or info.get("general.architecture") or "")
    architecture = str(info.get("general.architecture") or family)
    length = info.get(f"{architecture}.context_length")
    if not isinstance(length, int) or isinstance(length, bool) or length <= 0:
        lengths = [v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int) and v > 0]
        length = lengths[0] if lengths else None
    return family, length
