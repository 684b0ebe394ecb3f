"""Which reasoner runs: probe Ollama and apply LLM_PROVIDER (auto|ollama|extractive)."""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Literal

from rabbithole_lab.reasoning.llm.deadline import call_with_deadline
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)


@dataclass
class OllamaStatus:
    base_url: str
    reachable: bool
    models: list[str] = field(default_factory=list)
    error: str = ""

    def has(self, model: str) -> bool:
        wanted = model if ":" in model else f"{model}:latest"
        return any(name == model or name == wanted for name in self.models)


@dataclass
class ProviderChoice:
    provider: Literal["ollama", "extractive"]
    model: str | None
    reason: str  # in English (logs, terminal)
    reason_key: str = ""  # the same in the reader's language: messages.reasoner_reason(key, values)
    reason_values: dict = field(default_factory=dict)


def ollama_json(settings: Settings, path: str, body: dict | None = None) -> object:
    """The JSON the configured Ollama host (the one network peer we talk to) answers at `path`: GET, or POST
    of `body`, within twice OLLAMA_PROBE_TIMEOUT_S in all. Raises URLError/OSError (DeadlineExceeded is one:
    a server that trickles counts as not answering) or ValueError (an answer that is not JSON)."""
    base_url = settings.ollama.base_url.rstrip("/")
    timeout_s = settings.ollama.probe_timeout_s
    data = json.dumps(body).encode() if body is not None else None

    def fetch() -> object:
        request = urllib.request.Request(f"{base_url}{path}", data=data, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return json.loads(response.read().decode("utf-8"))

    return call_with_deadline(fetch, 2 * timeout_s, f"Ollama at {base_url}")


def probe_ollama(settings: Settings) -> OllamaStatus:
    """GET /api/tags on the configured Ollama host."""
    base_url = settings.ollama.base_url.rstrip("/")
    try:
        payload = ollama_json(settings, "/api/tags")
    except (json.JSONDecodeError, UnicodeDecodeError):  # a page of a proxy or another service: the address is wrong
        return OllamaStatus(base_url, False, error="answers, but not as Ollama (no JSON at /api/tags): "
                                                   "check OLLAMA_BASE_URL")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return OllamaStatus(base_url, False, error=str(reason))
    items = payload.get("models") if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return OllamaStatus(base_url, False, error="/api/tags answered JSON without a 'models' list (not Ollama?)")
    models = [item.get("name", "") for item in items if isinstance(item, dict) and isinstance(item.get("name"), str)]
    return OllamaStatus(base_url, True, models)


def choose_provider(settings: Settings, status: OllamaStatus | None = None) -> ProviderChoice:
    configured = settings.llm.provider
    if configured == "extractive":
        return ProviderChoice("extractive", None, "LLM_PROVIDER=extractive", "configured",
                              {"setting": "LLM_PROVIDER=extractive"})
    status = status or probe_ollama(settings)
    if configured == "ollama":
        return ProviderChoice("ollama", settings.ollama.model, "LLM_PROVIDER=ollama", "configured",
                              {"setting": "LLM_PROVIDER=ollama"})
    if not status.reachable:
        return ProviderChoice("extractive", None, f"Ollama at {status.base_url} does not answer ({status.error})",
                              "ollama_down", {"url": status.base_url, "error": status.error})
    for model in (settings.ollama.model, settings.ollama.fallback_model):
        if status.has(model):
            return ProviderChoice("ollama", model, f"Ollama at {status.base_url} has {model}", "ollama_has",
                                  {"url": status.base_url, "model": model})
    return ProviderChoice(
        "extractive",
        None,
        f"Ollama at {status.base_url} answers but has neither {settings.ollama.model} "
        f"nor {settings.ollama.fallback_model} (ollama pull {settings.ollama.model})",
        "ollama_lacks", {"url": status.base_url, "model": settings.ollama.model,
                         "fallback": settings.ollama.fallback_model},
    )
