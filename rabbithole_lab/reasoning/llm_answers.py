"""How one structured answer is read: the model's JSON (qwen3 <think> blocks stripped) validated against the
step's schema and of its shape, the texts in it (for the language check), and what one ask went through."""

from __future__ import annotations

import json
import re
from typing import TypeVar

from pydantic import BaseModel

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


def of_shape(answer: Model, schema: type[Model]) -> Model:
    """Every field of our answer schemas has a default, so JSON without any of them (`{"unexpected": 1}`)
    would validate as an empty answer: an answer is of the schema's shape only if it sets a field."""
    if schema.model_fields and not answer.model_fields_set:
        raise ValueError(f"JSON of the wrong shape: none of {', '.join(schema.model_fields)}")
    return answer


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
    try:
        return model.with_structured_output(schema, method="json_schema", include_raw=True)
    except (NotImplementedError, TypeError, ValueError):
        return model
