"""A total deadline for a blocking call to a network peer.

Socket timeouts bound each read, not the call: a server that trickles a byte every few seconds keeps
an HTTP request alive indefinitely. The call runs in a daemon thread; the caller stops waiting at the
deadline and says every `WAIT_NOTE_S` seconds what it is waiting for.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

logger = logging.getLogger(__name__)

Result = TypeVar("Result")
WAIT_NOTE_S = 30.0  # how often a long wait is reported in the log


class DeadlineExceeded(TimeoutError):
    """The call did not finish within its deadline."""


def call_with_deadline(call: Callable[[], Result], deadline_s: float, waiting_for: str) -> Result:
    """`call()`'s result or exception, or DeadlineExceeded after `deadline_s` seconds. The abandoned call
    keeps running in its daemon thread until its own socket timeout or the peer ends it."""
    outcome: dict = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed to the caller's thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=run, name="deadline-call", daemon=True).start()
    started = time.monotonic()
    while True:
        left_s = deadline_s - (time.monotonic() - started)
        if done.wait(timeout=max(0.0, min(WAIT_NOTE_S, left_s))):
            break
        waited_s = time.monotonic() - started
        if waited_s >= deadline_s:
            raise DeadlineExceeded(f"{waiting_for} gave no complete answer within {deadline_s:g} s")
        logger.info("Waiting for %s (%.0f s of at most %g s)", waiting_for, waited_s, deadline_s)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
