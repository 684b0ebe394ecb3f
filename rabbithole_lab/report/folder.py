"""A report folder: report.md, report.html, report.json, graph.html and the tier tables as CSV."""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from datetime import date
from pathlib import Path

from rabbithole_lab.evidence.findings import TIERS, research_context, tier_entries
from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.render import render_html, render_markdown
from rabbithole_lab.support.terminal_safety import json_escaped_controls, visible_controls
from rabbithole_lab.viz.reference_graph import graph_html, graph_legend_html, reference_graph, unresolved_html
from rabbithole_lab.viz.tables import context_chunks, tier_tables

STATE_KEYS_IN_JSON = ("reference_edges", "task_summaries", "retrieval_history", "relevance_validation",
                      "hitl_conversation_history", "quality_history", "todo_list", "query_anchor",
                      "hitl_context_summary")
# the tiers as the seeds name them: views over the run's findings, written out for readers of report.json
TIER_KEYS_IN_JSON = tuple(f"{tier}_context" for tier in TIERS)


def slugify(text: str, max_chars: int = 60) -> str:
    ascii_text = unicodedata.normalize("NFKD", text.replace("ß", "ss")).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", ascii_text).strip("-").lower()
    if len(slug) > max_chars:
        slug = slug[: max_chars + 1].rsplit("-", 1)[0]  # whole words only
    return slug.strip("-") or "report"


def question_slug(question: str) -> str:
    """The question's words and a short hash of the whole question: two questions whose first words agree
    still get folders of their own."""
    digest = hashlib.sha1(" ".join(question.split()).encode("utf-8")).hexdigest()[:8]
    return f"{slugify(question)}-{digest}"


def report_folder_name(question: str, day: date | None = None) -> str:
    return f"{(day or date.today()).isoformat()}_{question_slug(question)}"


SAVED_SUFFIX = "_saved"  # a report saved from the workbench: never taken for a batch run's folder


def new_saved_folder(reports_dir: Path, question: str, day: date | None = None) -> Path:
    """A folder of its own for a report saved from the workbench: `<date>_<question>_saved`, then
    `_saved-2`, `_saved-3`… — a save never overwrites an earlier one or a batch run's folder."""
    base = f"{report_folder_name(question, day)}{SAVED_SUFFIX}"
    folder, number = Path(reports_dir) / base, 1
    while folder.exists():
        number += 1
        folder = Path(reports_dir) / f"{base}-{number}"
    return folder


def write_report_folder(state: dict, out_dir: Path) -> dict[str, Path]:
    """Write every artefact of a finished run; returns name -> path."""
    if not state.get("final_report"):
        raise ValueError("The run has no final report yet")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    report = FinalReport.model_validate(state["final_report"])
    edges = state.get("reference_edges", [])
    paths = {name: out_dir / name for name in ("report.md", "report.html", "report.json", "graph.html")}
    paths["report.md"].write_text(render_markdown(report, edges), encoding="utf-8")
    paths["report.html"].write_text(visible_controls(render_html(report, edges)), encoding="utf-8")
    payload = {"report": report.model_dump()} | {key: state.get(key) for key in STATE_KEYS_IN_JSON} \
        | {f"{tier}_context": tier_entries(state, tier) for tier in TIERS} \
        | {"research_context": research_context(state).model_dump()}
    written = json.dumps(payload, ensure_ascii=False, indent=1, default=str)
    paths["report.json"].write_text(json_escaped_controls(written), encoding="utf-8")
    # the followed chains of the context; every skipped reference is in the report's table of references
    graph = reference_graph(edges, context_chunks(state), include_skipped=False, question=True)
    language = report.metadata.get("language", "de")
    # the page says what its colours and lines mean, as the workbench's graph does
    page = graph_html(graph, language=language).replace("<body>", "<body>" + graph_legend_html(graph, language), 1)
    page = page.replace("</body>", unresolved_html(edges, language) + "</body>", 1)
    paths["graph.html"].write_text(visible_controls(page), encoding="utf-8")
    for tier, frame in tier_tables(state).items():
        path = out_dir / f"tier_{tier}.csv"
        frame.map(lambda cell: visible_controls(cell) if isinstance(cell, str) else cell).to_csv(path, index=False)
        paths[path.name] = path
    return paths


def load_report_folder(folder: Path) -> dict:
    """The saved state subset of a report folder (for the reference-graph notebook)."""
    payload = json.loads((Path(folder) / "report.json").read_text(encoding="utf-8"))
    state = {key: payload.get(key) or [] for key in (*STATE_KEYS_IN_JSON, *TIER_KEYS_IN_JSON)}
    state["final_report"] = payload["report"]
    return state
