"""Progress for long work: bars where they can be drawn (a terminal, a notebook), plain lines in a log
where they cannot (stderr piped to a file or a CI log, where a bar's carriage returns and cursor moves
would be written out as escape codes), or one line of a front end's own (`progress_shown_by`: the
workbench's status line, so a notebook's first screen keeps no finished bar in a stderr box)."""

from __future__ import annotations

import functools
import logging
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from rabbithole_lab.support.terminal_safety import raw_stream, visible_controls

logger = logging.getLogger(__name__)

PLAIN_EVERY_S = 10.0  # a plain progress line at most this often
SHOWN_EVERY_S = 0.25  # a front end's status line at most this often
_SHOW_LINE: ContextVar[Callable[[str], None] | None] = ContextVar("progress_show_line", default=None)


@contextmanager
def progress_shown_by(show_line: Callable[[str], None]):
    """Inside the block, progress is told to `show_line` as one line ("Files: 2/4 file (QStrG.pdf)"), and an
    empty line when the work is done, instead of a bar (in this thread)."""
    token = _SHOW_LINE.set(show_line)
    try:
        yield
    finally:
        _SHOW_LINE.reset(token)


def bars_drawable() -> bool:
    """Whether a bar can be drawn: stderr is a terminal, or the code runs in a notebook kernel."""
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


class PlainProgress:
    """The part of tqdm's interface this package uses, written as log lines: "Files: 2/4 (QStrG.pdf)"."""

    def __init__(self, iterable: Iterable | None = None, desc: str = "", total: int | None = None,
                 unit: str = "it"):
        self.iterable = iterable
        self.desc = desc
        self.unit = unit
        self.total = total if total is not None else (len(iterable) if hasattr(iterable, "__len__") else None)
        self.n = 0
        self.postfix = ""
        self._said_at = 0.0
        self._started = time.monotonic()

    def __iter__(self) -> Iterator:
        for item in self.iterable or []:
            yield item
            self.update(1)

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, count: int = 1) -> None:
        self.n += count
        if time.monotonic() - self._said_at >= self._every_s():
            self._say()

    def _every_s(self) -> float:
        return PLAIN_EVERY_S

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        if self.n:
            self._say()

    def line(self) -> str:
        total = f"/{self.total}" if self.total else ""
        elapsed_s = max(time.monotonic() - self._started, 1e-9)
        rate = self.n / elapsed_s
        pace = f", {rate:.1f} {self.unit}/s" if self.n and elapsed_s >= 1 else ""
        if pace and self.total and self.total > self.n:
            pace += f", about {_duration((self.total - self.n) / rate)} left"
        return f"{self.desc}: {self.n}{total} {self.unit}{pace}{f' ({self.postfix})' if self.postfix else ''}"

    def _say(self) -> None:
        self._said_at = time.monotonic()
        logger.info("%s", self.line())


class ShownProgress(PlainProgress):
    """Progress told to a front end's one status line (`progress_shown_by`), emptied when done."""

    def __init__(self, show_line: Callable[[str], None], iterable: Iterable | None = None, desc: str = "",
                 total: int | None = None, unit: str = "it"):
        super().__init__(iterable, desc=desc, total=total, unit=unit)
        self.show_line = show_line

    def _every_s(self) -> float:
        return SHOWN_EVERY_S

    def set_postfix_str(self, text: str) -> None:
        self.postfix = text
        self.update(0)

    def close(self) -> None:
        self.show_line("")

    def _say(self) -> None:
        self._said_at = time.monotonic()
        self.show_line(self.line())


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min {rest} s" if minutes else f"{rest} s"


def progress(iterable: Iterable | None = None, *, desc: str, unit: str, show: bool = True, total: int | None = None,
             leave: bool = False):
    """A tqdm bar where one can be drawn, plain log lines where not, the front end's status line inside
    `progress_shown_by`, nothing when `show` is False."""
    show_line = _SHOW_LINE.get()
    if show and show_line is not None:
        return ShownProgress(show_line, iterable, desc=visible_controls(desc), total=total, unit=unit)
    if show and not bars_drawable():
        return PlainProgress(iterable, desc=desc, total=total, unit=unit)
    return _safe_bar_class()(iterable, desc=visible_controls(desc), unit=unit, total=total, disable=not show,
                             leave=leave, file=raw_stream(sys.stderr))


@functools.cache
def _safe_bar_class():
    # the text bar in a notebook too: tqdm's notebook bar is a widget, and a finished one (closed, as leave=False
    # does) left a view of a closed model in the cell, drawn as "Error displaying widget: model not found" when
    # the Lab drew the notebook again (switching tabs); a text bar in the cell's stream output redraws as text
    from tqdm.std import tqdm

    class _SafeBar(tqdm):
        """A tqdm bar that draws on the raw terminal (its own carriage returns) and shows a label's control
        characters visibly (a file name is document data)."""

        def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
            super().set_postfix_str(visible_controls(str(s)), refresh=refresh)

    return _SafeBar

