"""Text from documents, file names, questions and models never drives the terminal: the one place where
control characters are made visible before they reach a terminal, a log or report.md.

A document can carry escape sequences ("ESC ] 0 ; … BEL" sets the window title, "ESC ] 52 ; c ; …" writes
the clipboard, "ESC [ 2 J" clears the screen). Every C0 control except newline and tab, DEL, and every C1
control is shown as a visible character instead ("␛]0;title␇"): the reader sees that the text held one,
and the terminal runs nothing. The command line wraps stdout and stderr once (`safe_standard_streams`), so
every print and log line passes here; report.md is written through `visible_controls`; progress bars write
their own cursor moves to the raw stream (`raw_stream`), with their labels made safe.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

# C0 (but newline and tab), DEL, C1, and the bidirectional formatting characters: U+202E shows "evil\u202efdp.md" as
# "evilmd.pdf", so a file name or a quote could read as something it is not
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_CONTROLS = re.compile(rf"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_JSON_RAW = re.compile(rf"[\x7f-\x9f{_BIDI}]")  # what json.dumps(ensure_ascii=False) leaves raw
_C0_PICTURES = 0x2400  # Unicode's Control Pictures block: U+241B "␛" is the picture of ESC (0x1B)


def _picture(match: re.Match) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(_C0_PICTURES + code)
    if code == 0x7F:
        return "\u2421"  # ␡
    return f"<U+{code:04X}>"  # C1 controls and bidi marks have no picture


def visible_controls(text: str) -> str:
    """`text` with every control character but newline and tab shown visibly; a Windows line end is a line
    end."""
    return _CONTROLS.sub(_picture, text.replace("\r\n", "\n"))


def json_escaped_controls(json_text: str) -> str:
    """JSON written with `ensure_ascii=False` with the characters it leaves raw that a terminal acts on (DEL, C1,
    bidi marks) as `\\uXXXX` escapes: the same JSON value, safe to `cat`. (They stand only inside strings.)"""
    return _JSON_RAW.sub(lambda match: f"\\u{ord(match.group()):04x}", json_text)


class SafeTextStream(io.TextIOBase):
    """A text stream that writes through `visible_controls` to the stream it wraps."""

    def __init__(self, raw: TextIO):
        super().__init__()
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(visible_controls(text))
        return len(text)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", "utf-8")


def raw_stream(stream: TextIO) -> TextIO:
    """The stream under a `SafeTextStream` (a progress bar's own carriage returns must reach the terminal)."""
    return stream.raw if isinstance(stream, SafeTextStream) else stream


@contextmanager
def safe_standard_streams() -> Iterator[None]:
    """stdout and stderr wrapped in `SafeTextStream` while the block runs (once, however deeply nested)."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, SafeTextStream):
        sys.stdout = SafeTextStream(sys.stdout)
    if not isinstance(sys.stderr, SafeTextStream):
        sys.stderr = SafeTextStream(sys.stderr)
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        sys.stdout, sys.stderr = saved
