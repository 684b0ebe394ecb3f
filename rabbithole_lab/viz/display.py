"""Notebook display helpers for a finished run's state (no widgets: static and interactive HTML)."""

from __future__ import annotations

import html
from urllib.parse import quote

from IPython.display import HTML, Image, Markdown, display

from rabbithole_lab.evidence.reference_edges import distinct_references, followed_count, reference_label
from rabbithole_lab.messages.catalogue import graph_text, ui_text
from rabbithole_lab.messages.reasons import edge_reason, reached_by
from rabbithole_lab.viz.reference_graph import (
    graph_height_px,
    graph_html,
    graph_legend_html,
    graph_png,
    hidden_note,
    reference_graph,
)
from rabbithole_lab.viz.tables import context_chunks, full_extracts, tier_table_html, tier_tables


class GraphFrame:
    """The interactive graph in an iframe of its own (srcdoc: nothing is served, nothing fetched). IPython's
    IFrame needs a URL, and HTML holding an iframe draws a warning into the notebook, so it displays itself."""

    def __init__(self, page: str, height_px: int = 560):
        self.page, self.height_px = page, height_px

    def _repr_html_(self) -> str:
        return (f'<iframe class="rh-graph" srcdoc="{html.escape(self.page, quote=True)}" '
                f'style="width:100%;box-sizing:border-box;height:{self.height_px}px;border:1px solid #ddd"></iframe>')


def show_tiers(state: dict) -> None:
    language = state.get("detected_language") or run_language(state)
    for tier, frame in tier_tables(state).items():
        display(Markdown(f"### {ui_text(language)[tier]} ({len(frame)})"))
        display(HTML(tier_table_html(frame, language, full_extracts(state, tier))))


def show_graph(state: dict, interactive: bool = True, include_skipped: bool = False,
               graph_file: str | None = None) -> None:
    """The graph by depth with its legend, shown once: the interactive pyvis view (a notebook the researcher
    runs), or with `interactive=False` a PNG, which shows in every notebook, also an executed one opened
    untrusted (where scripts and SVG are not shown), with a link to the saved interactive page `graph_file`
    (relative to the notebook). Skipped references only with `include_skipped`."""
    language = state.get("detected_language") or run_language(state)
    edges = state.get("reference_edges", []) or []
    graph = reference_graph(edges, context_chunks(state), include_skipped=include_skipped, question=True)
    followed, skipped = followed_count(edges)
    said = graph_text(language)
    summary = said["summary"].format(followed=followed, skipped=skipped)
    if hidden := hidden_note(graph, language):
        summary += " · " + hidden
    display(Markdown(f"**{summary}**"))
    display(HTML(graph_legend_html(graph, language)))
    if interactive:
        height_px = graph_height_px(graph)
        display(GraphFrame(graph_html(graph, height=f"{height_px}px", language=language), height_px + 40))
        return
    display(Image(data=graph_png(graph, language), format="png", alt=summary))
    if graph_file:
        display(Markdown(f"[{said['interactive']}]({quote(graph_file)})"))


def edge_table(state: dict, language: str | None = None):
    """Every reference once (the same reference met in two tasks is one row), with its full reason: a
    Styler that wraps long text instead of cutting it. Headers, kinds and decisions in the run's language."""
    import pandas as pd

    language = language or run_language(state)
    said = graph_text(language)
    columns = ["from", "reference", "type", "decision", "reason", "depth", "to"]
    rows = [{"from": f"{e.get('from_doc', '')} {e.get('from_section', '')}".strip(),
             "reference": reference_label(e["target"]),
             "type": reference_kind(e, said), "decision": said.get(e["decision"], e["decision"]),
             "reason": edge_reason(e, language), "depth": reached_by(e.get("depth"), language),
             "to": ", ".join(f"{d} {s}".strip() for d, s in zip(e.get("to_docs", []), e.get("to_sections", []),
                                                                  strict=False))}
            for e in distinct_references(state.get("reference_edges", []) or [])]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.rename(columns={column: said[f"col_{column}"] for column in columns})
    return (frame.style.hide(axis="index").format(escape="html")
            .set_table_styles([{"selector": "th, td", "props": "text-align:left; vertical-align:top;"}])
            .set_properties(**{"white-space": "normal"}))


def reference_kind(edge: dict, said: dict[str, str]) -> str:
    """The kind of a reference as the reader's language names it, with what it does when it does more than
    cite ("Vorschrift · gilt entsprechend", "section · delegation")."""
    kind = said.get(f"type_{edge['type']}", edge["type"])
    relation = edge.get("relation", "cites")
    return kind if relation == "cites" else f"{kind} · {said.get(f'relation_{relation}', relation)}"


def run_language(state: dict) -> str:
    """The language a saved run speaks: its report's, else the session's."""
    return ((state.get("final_report") or {}).get("metadata") or {}).get("language") \
        or state.get("detected_language") or "de"
