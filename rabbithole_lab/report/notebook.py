"""Showing a finished run's report in a notebook (the same rendering as report.md)."""

from __future__ import annotations

from IPython.display import Markdown, display

from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.render import render_markdown


def show_report(state: dict) -> None:
    report = FinalReport.model_validate(state["final_report"])
    display(Markdown(render_markdown(report, state.get("reference_edges", []) or [])))
