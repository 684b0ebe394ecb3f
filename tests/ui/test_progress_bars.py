"""Progress in a notebook is text in the cell's output, never a widget that outlives its model."""

from __future__ import annotations

import io
import sys

from tqdm.notebook import tqdm_notebook

from rabbithole_lab.support.progress_bars import _safe_bar_class, progress, progress_shown_by


def test_a_bar_in_a_notebook_kernel_is_text_and_leaves_no_widget(monkeypatch):
    # what tqdm.auto looks for to pick its notebook (widget) bar: a kernel's shell module is loaded
    monkeypatch.setitem(sys.modules, "ipykernel.zmqshell", sys.modules.get("ipykernel.zmqshell") or object())
    for module in ("tqdm.auto", "tqdm.autonotebook"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    _safe_bar_class.cache_clear()
    try:
        assert not issubclass(_safe_bar_class(), tqdm_notebook)
        stream = io.StringIO()
        monkeypatch.setattr(sys, "stderr", stream)
        with progress(range(3), desc="Dateien", unit="file") as bar:
            for _ in bar:
                pass
        assert "Dateien" in stream.getvalue()  # drawn as text in the cell's stream output
    finally:
        _safe_bar_class.cache_clear()


def test_progress_inside_a_front_end_s_status_line_writes_no_bar_and_ends_empty(monkeypatch):
    """The workbench shows its ingest in one status line: a finished text bar stayed in a stderr box above it."""
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr("rabbithole_lab.support.progress_bars.SHOWN_EVERY_S", 0.0)
    lines: list[str] = []
    with progress_shown_by(lines.append):
        with progress(["a.pdf", "b.pdf"], desc="Files", unit="file") as bar:
            for name in bar:
                bar.set_postfix_str(name)
    assert stream.getvalue() == ""  # nothing on stderr
    assert any(line.startswith("Files: 1/2 file") and "b.pdf" in line for line in lines), lines
    assert lines[-1] == ""  # the line is emptied when the work is done
    with progress(range(2), desc="Files", unit="file", show=False) as bar:  # outside the block: as everywhere
        list(bar)
    assert lines[-1] == ""
