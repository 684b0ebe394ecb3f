"""A fake Ollama HTTP server on loopback for tests only: it speaks enough of Ollama's API (`/api/tags`,
streamed `/api/chat`) for the real `ChatOllama` client, and misbehaves in the ways a real server can.

`behaviour` can be changed while the server runs:
  good       — step-aware JSON answers from the scripted fake's default script
  hanging    — accepts the request and never answers
  trickling  — sends headers, then one byte every `trickle_s` seconds, never a complete answer
  http_500   — an internal server error
  not_json   — a well-formed chat reply whose content is prose
  wrong_shape — a chat reply whose content is JSON of the wrong schema
  wrong_protocol — a body that is JSON but not an Ollama chat reply
  english / chinese — good answers with every text written in English / Chinese
  empty_answer — good answers, but the synthesis is empty
  uncited — good answers, but the synthesis is prose that cites no page
"""

from __future__ import annotations

import json
import threading
import time
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


class FakeOllama:
    def __init__(self, behaviour: str = "good", tags: object | None = None, trickle_s: float = 0.2):
        self.behaviour = behaviour
        self.tags = tags if tags is not None else {"models": [{"name": MODEL}]}
        self.trickle_s = trickle_s
        self.chat_requests = 0
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

    def __enter__(self) -> FakeOllama:
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
            return json.dumps({"answer": "", "key_findings": []})
        if self.behaviour == "uncited" and step == "synthesize":  # fluent, and nothing in it can be checked
            return json.dumps({"answer": UNCITED_ANSWER, "key_findings": [{"claim": UNCITED_ANSWER, "sources": []}]},
                              ensure_ascii=False)
        return good

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
                if self.path != "/api/chat":
                    self._send(404, b'{"error": "not found"}')
                    return
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
                        except OSError:
                            return
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
                content = fake.content_for(prompt)
                stamp = datetime.now(UTC).isoformat()
                lines = [{"model": request.get("model", MODEL), "created_at": stamp,
                          "message": {"role": "assistant", "content": content}, "done": False},
                         {"model": request.get("model", MODEL), "created_at": stamp,
                          "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
                          "total_duration": 1, "prompt_eval_count": len(prompt) // 4, "eval_count": 10}]
                self._send(200, "".join(json.dumps(line) + "\n" for line in lines).encode(), "application/x-ndjson")

        return Handler


def wait_until(condition, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
