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


_abandoned = 0  # calls given up on whose threads may still be blocked in a read
_abandoned_lock = threading.Lock()


def abandoned_calls() -> int:
    """How many calls this process gave up on at their deadline. Their threads (and any worker thread a
    library started for them) may still be blocked on a socket: a command line run that ends must not
    wait for them (`exit_now`)."""
    return _abandoned


def exit_now(code: int) -> None:
    """End the process with `code` at once, after flushing output and logs, without joining threads that
    are still blocked in an abandoned call (the interpreter would wait for them at shutdown, for ever
    against a server that trickles bytes)."""
    import os
    import sys

    logger.info("%d model call(s) were abandoned at their deadline; exiting without waiting for them",
                _abandoned)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def call_with_deadline(call: Callable[[], Result], deadline_s: float, waiting_for: str,
                       note_waits: bool = True, on_abandon: Callable[[], None] | None = None) -> Result:
    """`call()`'s result or exception, or DeadlineExceeded after `deadline_s` seconds. The abandoned call
    keeps running in its daemon thread until its own socket timeout or the peer ends it, unless
    `on_abandon` ends it (closes its connection, so that the peer stops working on it)."""
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
            global _abandoned
            with _abandoned_lock:
                _abandoned += 1
            if on_abandon is not None:
                try:
                    on_abandon()
                except Exception as exc:  # closing is a courtesy to the peer: the deadline stands either way
                    logger.info("Could not end the abandoned call to %s (%s)", waiting_for, exc)
            raise DeadlineExceeded(f"{waiting_for} gave no complete answer within {deadline_s:g} s")
        if note_waits:
            logger.info("Waiting for %s (%.0f s of at most %g s)", waiting_for, waited_s, deadline_s)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
