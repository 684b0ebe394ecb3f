"""How one structured answer is read: the model's JSON (qwen3 <think> blocks stripped) validated against the
step's schema and of its shape, the texts in it (for the language check), and what one ask went through."""

from __future__ import annotations

import json
import re
import threading
import time
from typing import TypeVar

from pydantic import BaseModel

from rabbithole_lab.reasoning.llm.deadline import call_with_deadline

Model = TypeVar("Model", bound=BaseModel)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)  # the object in a chat model's text without structured output


class LLMError(RuntimeError):
    """The model answered, but not with usable JSON, after retries and fallback."""


def parse_json_answer(text: str, schema: type[Model]) -> Model:
    cleaned = _THINK.sub("", text).strip()
    cleaned = re.sub(r"^```(?:json)?|```$", "", cleaned.strip(), flags=re.MULTILINE).strip()
    match = _JSON_OBJECT.search(cleaned)
    if not match:
        raise ValueError(f"no JSON object in the answer: {cleaned[:80]!r}")
    return of_shape(schema.model_validate(json.loads(match.group(0))), schema)


# what a model writes when it has nothing to say but must fill a field: no content
PLACEHOLDERS = frozenset({"-", "--", "–", "—", "...", "…", "?", "n/a", "na", "none", "null", "nil", "todo", "tbd",
                          "placeholder", "xxx"})


def of_shape(answer: Model, schema: type[Model]) -> Model:
    """A model's answer has every field of the schema (the schema sent to the model requires them all:
    `required_schema`), and content: a field holding a placeholder ("-", "n/a", "…") or an answer whose texts
    are all empty counts as invalid JSON, so the step is retried and then answered by the fallback."""
    asked = schema.model_json_schema().get("properties", {})  # what the model is asked for (required_schema)
    missing = [name for name in asked if name not in answer.model_fields_set]
    if missing:
        raise ValueError(f"JSON of the wrong shape: without {', '.join(missing)}")
    fields = answer.model_dump()
    filler = [text for text in _strings(fields) if text.strip().casefold() in PLACEHOLDERS]
    if filler:
        raise ValueError(f"placeholder content instead of an answer ({filler[0]!r})")
    # an empty list says "none" (no reference, no change to the plan); empty texts and nothing else say nothing
    texts = [value for value in fields.values() if isinstance(value, str)]
    scalars = [value for value in fields.values() if isinstance(value, bool | int | float)]
    if texts and not any(text.strip() for text in texts) and not scalars and \
            not any(isinstance(value, list) and value for value in fields.values()):
        raise ValueError("an empty answer (no content in any field)")
    return answer


def _strings(value: object):
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def required_schema(schema: type[BaseModel]) -> dict:
    """The JSON schema sent to the model, with every property required (pydantic leaves a field with a
    default optional, and a model may then answer `{}`)."""
    def require_all(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("properties"), dict):
                node["required"] = list(node["properties"])
            for item in node.values():
                require_all(item)
        elif isinstance(node, list):
            for item in node:
                require_all(item)

    document = schema.model_json_schema()
    require_all(document)
    return document


def text_fields(value: object) -> str:
    """All human-readable strings of a structured answer (for the language check)."""
    if isinstance(value, BaseModel):
        return text_fields(value.model_dump())
    if isinstance(value, dict):
        return " ".join(text_fields(v) for k, v in value.items() if k not in ("quote", "sources"))
    if isinstance(value, list):
        return " ".join(text_fields(v) for v in value)
    return value if isinstance(value, str) else ""


class AskRecord:
    """What one structured ask went through: did any model answer, and the errors on the way; `given_up`
    once its total deadline passed (no further attempt is sent)."""

    def __init__(self) -> None:
        self.answered = False
        self.given_up = False
        self.errors: list[str] = []
        self.foreign = False  # the host answered with something that is not Ollama's JSON (an HTML page)

    def failed(self, exc: Exception) -> None:
        self.errors.append(f"{type(exc).__name__}: {exc}")
        if isinstance(exc, json.JSONDecodeError) or "<html" in str(exc)[:2000].lower():
            self.foreign = True


class GivenUp(RuntimeError):
    """An attempt not sent: the call's total deadline has passed."""


def structured_model(model, schema: type[BaseModel]):
    """The chat model with LangChain's structured output (JSON schema, raw message kept for the <think>
    stripping), or the plain model for chat models without it (the schema is in the prompt)."""
    try:  # the answer is read from the raw message by `parse_json_answer` against `schema` itself
        return model.with_structured_output(required_schema(schema), method="json_schema", include_raw=True)
    except (NotImplementedError, TypeError, ValueError):
        return model


def close_connections(model) -> None:
    """End the requests `model` (a ChatOllama) has open: its HTTP client is replaced by a new one and the old
    one closed, so a call abandoned at its deadline stops reading and Ollama, seeing the connection go, stops
    generating for it (left open, it would hold one of the server's few parallel slots to the end)."""
    old = getattr(model, "_client", None)
    if old is None or not hasattr(model, "_set_clients"):
        return
    model._set_clients()  # the next call gets a client of its own
    inner = getattr(old, "_client", None)
    if inner is not None:
        inner.close()


def transport_errors() -> tuple[type[BaseException], ...]:
    """What a retry of the same request can cure: the connection, a timeout, the server's own error, a reply
    the client cannot read as Ollama's (it fails with AttributeError, TypeError or KeyError on a body of
    another shape). An answer that is not the JSON asked for (ValueError from `parse_json_answer` and
    `of_shape`) is not among them: asking the same again mostly gets the same, so `LLMReasoner._ask` asks
    once more with the validation error instead."""
    import httpx
    import ollama

    return (OSError, httpx.HTTPError, ollama.ResponseError, AttributeError, TypeError, KeyError)


def within_deadline(runnable, prompt: str, deadline_s: float | None, model=None):
    """The call, ended after `deadline_s` in all (a server that trickles a byte now and then keeps a read
    timeout from ever firing); an abandoned call's connection is closed, so Ollama stops generating."""
    if not deadline_s:
        return runnable.invoke(prompt)
    return call_with_deadline(lambda: runnable.invoke(prompt), deadline_s, "the language model",
                              on_abandon=lambda: close_connections(model))


class CallLog:
    """Every step a reasoner asked of the model: the step, the prompt's characters, how the answer was
    ("valid", "repaired" after being told what was wrong, "unusable") and the seconds it took (the smoke
    run's table, `rabbithole doctor --smoke`)."""

    def __init__(self) -> None:
        self.calls: list[dict] = []
        self._lock = threading.Lock()

    def add(self, step: str, prompt_chars: int, outcome: str, started: float) -> None:
        with self._lock:
            self.calls.append({"step": step, "prompt_chars": prompt_chars, "outcome": outcome,
                               "seconds": round(time.monotonic() - started, 2)})
