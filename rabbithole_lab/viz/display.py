"""Notebook display helpers for a finished run's state (no widgets: static and interactive HTML)."""

from __future__ import annotations

import html

from IPython.display import HTML, SVG, Markdown, display

from rabbithole_lab.ui.text import column_headers, ui_text
from rabbithole_lab.viz.graph import graph_html, graph_svg, reference_graph
from rabbithole_lab.viz.tables import context_chunks, full_extracts, tier_table_html, tier_tables


def show_tiers(state: dict) -> None:
    language = state.get("detected_language", "de")
    for tier, frame in tier_tables(state).items():
        display(Markdown(f"### {ui_text(language)[tier]} ({len(frame)})"))
        display(HTML(tier_table_html(frame, column_headers(language), full_extracts(state, tier))))


def show_graph(state: dict, interactive: bool = True) -> None:
    """The graph as SVG (renders everywhere) and, in trusted notebooks, as the interactive pyvis view."""
    graph = reference_graph(state.get("reference_edges", []) or [], context_chunks(state))
    display(Markdown(f"**{graph.number_of_nodes()} sections, {graph.number_of_edges()} references** "
                     f"({sum(1 for *_, d in graph.edges(data=True) if d['decision'] == 'followed')} followed)"))
    display(SVG(graph_svg(graph)))
    if interactive:
        page = graph_html(graph, height="520px")
        display(HTML(f'<iframe class="rh-graph" srcdoc="{html.escape(page, quote=True)}" '
                     f'style="width:100%;height:560px;border:1px solid #ddd"></iframe>'))


def edge_table(state: dict):
    import pandas as pd

    rows = [{"from": f"{e.get('from_doc', '')} {e.get('from_section', '')}".strip(), "reference": e["target"],
             "type": e["type"], "decision": e["decision"], "reason": e.get("reason", ""), "depth": e.get("depth"),
             "to": ", ".join(f"{d} {s}".strip() for d, s in zip(e.get("to_docs", []), e.get("to_sections", []),
                                                                  strict=False))}
            for e in state.get("reference_edges", []) or []]
    return pd.DataFrame(rows, columns=["from", "reference", "type", "decision", "reason", "depth", "to"])
