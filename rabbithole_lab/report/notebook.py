"""Showing a finished run's report in a notebook (the same rendering as report.md)."""

from __future__ import annotations

from pathlib import Path

from IPython.display import Markdown, display

from rabbithole_lab.evidence.sources import links_relative_to
from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.render import render_markdown


def show_report(state: dict, notebook_dir: str | Path | None = None) -> None:
    """The report as Markdown. With `notebook_dir` (the folder of the notebook showing it) citations and
    sources are links relative to it, which JupyterLab opens at the page, also in an untrusted notebook
    (its sanitiser drops file:// links)."""
    report = FinalReport.model_validate(state["final_report"])
    link = links_relative_to(Path(notebook_dir)) if notebook_dir is not None else None
    display(Markdown(render_markdown(report, state.get("reference_edges", []) or [], link=link)))
