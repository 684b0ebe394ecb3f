"""Progress in a notebook is text in the cell's output, never a widget that outlives its model."""

from __future__ import annotations

import io
import sys

from tqdm.notebook import tqdm_notebook

from rabbithole_lab.progress import _safe_bar_class, progress


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
