"""A circuit breaker for the model: after a number of consecutive failures of one kind (unusable answers,
no answer at all) it opens, and the rest of the run is answered by the extractive reasoner without
asking the model again. A model that answers the wrong schema every time otherwise costs every step
its retries (hundreds of calls in one run)."""

from __future__ import annotations

import threading
from typing import Literal

FailureKind = Literal["unusable", "unreachable"]


class CircuitBreaker:
    def __init__(self, limit: int):
        self.limit = limit
        self.kind: FailureKind | None = None
        self.in_a_row = 0
        self.opened_by: FailureKind | None = None
        self._lock = threading.Lock()

    @property
    def open(self) -> bool:
        return self.opened_by is not None

    def succeeded(self) -> None:
        with self._lock:
            self.kind, self.in_a_row = None, 0

    def failed(self, kind: FailureKind) -> bool:
        """Count a failure; True when this one opened the breaker (exactly once per run)."""
        with self._lock:
            if self.opened_by is not None:
                return False
            self.in_a_row = self.in_a_row + 1 if kind == self.kind else 1
            self.kind = kind
            if self.in_a_row >= self.limit:
                self.opened_by = kind
                return True
            return False
