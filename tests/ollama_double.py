"""A server double of Ollama on loopback, for tests only: it speaks Ollama's API as the real `ChatOllama`
client uses it (`/api/tags`, `/api/show`, streamed `/api/chat`) and behaves as Ollama does where local models
fail a product:
- `/api/show` reports the model's context length (`context_tokens`) and family;
- a prompt longer than the window (`num_ctx` of the request, capped at the model's context length) loses its
  beginning, silently, as in Ollama; the double counts tokens as dense German text runs with the tokenizers of
  the models users run (2.5 characters a token, bench/results/tokens.json) and records every truncation;
- it answers at most `num_parallel` requests at once and queues the rest (OLLAMA_NUM_PARALLEL), recording
  the most it ever served at once;
- it records the `format` schema and `think` flag of every request, and answers with thinking text first
  when `think` is on;
- it streams.

`behaviour` can be changed while the server runs:
  good       — step-aware JSON answers from the scripted fake's default script
  hanging    — accepts the request and never answers
  trickling  — sends headers, then one byte every `trickle_s` seconds, never a complete answer
  dropped    — closes the connection without an answer
  http_500   — an internal server error
  not_json   — a well-formed chat reply whose content is prose
  empty_object — a chat reply whose content is `{}`
  repairable — prose at first; good JSON once the prompt says what was wrong with it (a "### Repair" section)
  wrong_shape — a chat reply whose content is JSON of the wrong schema
  wrong_protocol — a body that is JSON but not an Ollama chat reply
  html       — a web page where Ollama's JSON should be (another service at the address)
  english / chinese — good answers with every text written in English / Chinese
  placeholder — schema-valid JSON with "-" in every text field
  empty_answer — good answers, but the synthesis is empty
  uncited — good answers, but the synthesis is prose that cites no page
"""

from __future__ import annotations

import json
import math
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.scripted_fake import ScriptedFakeChatModel, default_script

CHINESE_TEXT = "这是一个用中文写的回答，它没有使用问题的语言。"
MODEL = "fake-model:latest"
UNCITED_ANSWER = "Der Betreiber muss den Vorfall unverzüglich melden; das ist allgemein üblich."
HTML_PAGE = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body><form>...</form></body></html>\n"


def _rewrite_texts(value, text: str):
    """Every human-readable string of a JSON answer replaced by `text` (names and numbers kept)."""
    if isinstance(value, dict):
        return {k: (v if k in ("document", "page", "quote", "reference", "sources") else _rewrite_texts(v, text))
                for k, v in value.items()}
    if isinstance(value, list):
        return [_rewrite_texts(v, text) for v in value]
    return text if isinstance(value, str) and len(value) > 3 else value


def _placeholder(value):
    if isinstance(value, dict):
        return {k: _placeholder(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_placeholder(v) for v in value]
    return "-" if isinstance(value, str) else value


CHARS_PER_TOKEN = 2.5  # dense German text with Qwen3 / Llama 3.1 (bench/results/tokens.json, 5th percentile)


@dataclass
class ChatRecord:
    """One /api/chat request as the double saw it."""

    step: str
    prompt_tokens: int
    num_ctx: int | None
    window: int  # what the model held: num_ctx (Ollama's default 2048 without one), capped at its context length
    truncated: bool
    think: object
    format: object
    answer: str = ""  # the content the double answered
    repair: bool = False  # the prompt said what was wrong with the previous answer


class OllamaDouble:
    def __init__(self, behaviour: str = "good", tags: object | None = None, trickle_s: float = 0.2,
                 context_tokens: int | None = 32768, num_parallel: int = 4, family: str = "qwen3",
                 answer_delay_s: float = 0.0):
        self.behaviour = behaviour
        self.tags = tags if tags is not None else {"models": [{"name": MODEL}]}
        self.trickle_s = trickle_s
        self.context_tokens = context_tokens  # None: /api/show reports none (an older server)
        self.family = family
        self.answer_delay_s = answer_delay_s  # a model that takes its time: requests overlap
        self.chat_requests = 0
        self.records: list[ChatRecord] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.disconnects = 0  # requests whose client closed the connection before the answer was complete
        self._slots = threading.Semaphore(num_parallel)
        self._count_lock = threading.Lock()
        self.steps: list[str] = []
        self._stop = threading.Event()
        self._german = ScriptedFakeChatModel(script=default_script("de"))
        self._english = ScriptedFakeChatModel(script=default_script("en"))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OllamaDouble:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._server.shutdown()
        self._server.server_close()

    def content_for(self, prompt: str) -> str:
        step = self._german.step_of(prompt)
        self.steps.append(step)
        if self.behaviour == "not_json":
            return "Gern helfe ich Ihnen weiter, aber hier ist kein JSON."
        if self.behaviour == "empty_object" or (self.behaviour == "repairable" and "### Repair" not in prompt):
            return "{}" if self.behaviour == "empty_object" else "Gern! Die Antwort lautet: siehe oben."
        if self.behaviour == "wrong_shape":
            return json.dumps({"unexpected": [1, 2, 3]})
        if self.behaviour == "english":
            return str(self._english.invoke(prompt).content)
        good = str(self._german.invoke(prompt).content)
        if self.behaviour == "chinese":
            return json.dumps(_rewrite_texts(json.loads(good), CHINESE_TEXT), ensure_ascii=False)
        if self.behaviour == "placeholder":  # schema-valid JSON with "-" in every text field
            return json.dumps(_placeholder(json.loads(good)))
        if self.behaviour == "empty_answer" and step == "synthesize":
            return json.dumps({"answer": "", "decisive": "", "key_findings": []})
        if self.behaviour == "uncited" and step == "synthesize":  # fluent, and nothing in it can be checked
            return json.dumps({"answer": UNCITED_ANSWER, "decisive": "",
                               "key_findings": [{"claim": UNCITED_ANSWER, "sources": []}]}, ensure_ascii=False)
        return good

    @property
    def truncated(self) -> list[ChatRecord]:
        return [record for record in self.records if record.truncated]

    def _record(self, request: dict, prompt: str) -> ChatRecord:
        options = request.get("options") if isinstance(request.get("options"), dict) else {}
        num_ctx = options.get("num_ctx")
        window = num_ctx if isinstance(num_ctx, int) and num_ctx > 0 else 2048
        if self.context_tokens:
            window = min(window, self.context_tokens)
        tokens = math.ceil(len(prompt) / CHARS_PER_TOKEN)
        record = ChatRecord(self._german.step_of(prompt), tokens, num_ctx, window, tokens > window,
                            request.get("think"), request.get("format"), repair="### Repair" in prompt)
        with self._count_lock:
            self.records.append(record)
        return record

    def _show(self, request: dict) -> dict:
        info = {"general.architecture": self.family}
        if self.context_tokens:
            info[f"{self.family}.context_length"] = self.context_tokens
        return {"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                "details": {"family": self.family, "parameter_size": "8.2B", "quantization_level": "Q4_K_M"},
                "model_info": info, "capabilities": ["completion"]}

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet test output
                pass

            def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if fake.behaviour == "html":
                    self._send(200, HTML_PAGE, "text/html")
                elif self.path == "/api/tags":
                    self._send(200, json.dumps(fake.tags).encode())
                else:
                    self._send(404, b'{"error": "not found"}')

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path == "/api/show" and fake.behaviour != "html":
                    self._send(200, json.dumps(fake._show(request)).encode())
                    return
                if self.path != "/api/chat":
                    self._send(404, b'{"error": "not found"}')
                    return
                with fake._slots:  # Ollama answers num_parallel requests at once; the rest wait in its queue
                    with fake._count_lock:
                        fake.in_flight += 1
                        fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                    try:
                        self._chat(request)
                    finally:
                        with fake._count_lock:
                            fake.in_flight -= 1

            def _chat(self, request: dict) -> None:
                fake.chat_requests += 1
                behaviour = fake.behaviour
                if behaviour == "hanging":
                    fake._stop.wait(60)
                    return
                if behaviour == "trickling":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/x-ndjson")
                    self.end_headers()
                    while not fake._stop.wait(fake.trickle_s):
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:  # the client closed the connection: Ollama stops generating
                            with fake._count_lock:
                                fake.disconnects += 1
                            return
                    return
                if behaviour == "dropped":  # the connection closes with nothing said
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                if behaviour == "http_500":
                    self._send(500, b'{"error": "model runner has unexpectedly stopped"}')
                    return
                if behaviour == "html":  # another service, or a proxy's login page, at the configured address
                    self._send(200, HTML_PAGE, "text/html")
                    return
                if behaviour == "wrong_protocol":
                    self._send(200, b'[1, 2, 3]\n', "application/x-ndjson")
                    return
                prompt = "\n".join(str(m.get("content", "")) for m in request.get("messages", []))
                record = fake._record(request, prompt)
                if record.truncated:  # as Ollama: the beginning goes, silently (the task and rules are there)
                    prompt = prompt[-int(record.window * CHARS_PER_TOKEN):]
                if fake.answer_delay_s:
                    time.sleep(fake.answer_delay_s)
                content = record.answer = fake.content_for(prompt)
                stamp = datetime.now(UTC).isoformat()
                message = {"role": "assistant", "content": content}
                if request.get("think") is True:  # a thinking model asked to think says so first
                    message["thinking"] = "Ich überlege, welche Stelle die Frage beantwortet."
                lines = [{"model": request.get("model", MODEL), "created_at": stamp, "message": message,
                          "done": False},
                         {"model": request.get("model", MODEL), "created_at": stamp,
                          "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                          "total_duration": 1, "prompt_eval_count": min(record.prompt_tokens, record.window),
                          "eval_count": 10}]
                self._send(200, "".join(json.dumps(line) + "\n" for line in lines).encode(), "application/x-ndjson")

        return Handler


def wait_until(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
