"""Report rendering (escaping, links), the reference graph and tier tables."""

from __future__ import annotations

import html
import json
import re

import pandas as pd

from rabbithole_lab.evidence.findings import context_entries
from rabbithole_lab.evidence.sources import page_link, relative_page_link, resolve_source_path
from rabbithole_lab.messages.catalogue import REPORT, graph_text
from rabbithole_lab.records import FinalReport, Finding, LinkedSource
from rabbithole_lab.report.folder import load_report_folder, report_folder_name, slugify, write_report_folder
from rabbithole_lab.report.render import render_html, render_markdown
from rabbithole_lab.viz.reference_graph import graph_html, reference_graph
from rabbithole_lab.viz.tables import full_extracts, tier_table_html, tier_tables
from tests.conftest import DEMO_KB

EVIL = '<script>alert("x")</script> & "§ 5"'


def _state(tmp_path) -> dict:
    source = LinkedSource(doc_id="QStrG.pdf", page_number=2, relevance_score=0.9, collection="Recht",
                          section="§ 12", path=str(tmp_path / "QStrG.pdf"), link=page_link(tmp_path / "QStrG.pdf", 2))
    consulted = LinkedSource(doc_id="QStrV.pdf", page_number=1, relevance_score=0.5, collection="Recht",
                             section="§ 5", path=str(tmp_path / "QStrV.pdf"), link=page_link(tmp_path / "QStrV.pdf", 1))
    report = FinalReport(query=f"Frage {EVIL}",
                         answer=f"Antwort {EVIL} [QStrG.pdf, S. 2]\n\nNoch einmal „Satz“ [QStrG.pdf, S. 2]",
                         findings=[Finding(claim=EVIL, sources=[source])], sources=[source, consulted],
                         quality_score=400,
                         quality_breakdown={"factual_accuracy": 80}, metadata={"language": "de", "tasks": [
                             {"id": 0, "task": EVIL, "completed": True, "summary": f"Zusammenfassung {EVIL}",
                              "relevance_score": 0.75, "irrelevant_findings": [f"Randnotiz {EVIL}"],
                              "rounds": [{"iteration": 1, "reason": f"fehlt {EVIL}"},
                                         {"iteration": 2, "reason": "beantwortet"}]},
                             {"id": 1, "task": "Neue Aufgabe", "completed": True, "origin": "added",
                              "added_reason": f"Verweis {EVIL}"},
                             {"id": 2, "task": "Alte Aufgabe", "completed": True,
                              "closed_reason": "schon beantwortet"}],
                             "warnings": [EVIL],
                             "document_names": {"QStrG.pdf": "QStrG"},
                             "quote_sections": [{"doc": "QStrG.pdf", "page": 2, "quote": "Satz", "section": "§ 12"}],
                             "reasoner": {"provider": "extractive", "reason": "test"}})
    chunk = {"document": "QStrV.pdf", "section": "§ 5", "page": 1, "depth": 0, "tier": "primary",
             "relevance_score": 0.8, "extracted_info": EVIL, "task_id": 0, "chunk_id": "a", "cited_by": ""}
    target = chunk | {"document": "QStrG.pdf", "section": "§ 12", "page": 2, "depth": 1, "tier": "secondary",
                      "chunk_id": "b", "cited_by": "a"}
    edges = [
        {"from_chunk": "a", "to_chunks": ["b"], "type": "legal_section", "target": "§ 12 QStrG", "depth": 1,
         "decision": "followed", "reason": EVIL, "resolution": "section_index", "score": 0.7,
         "from_doc": "QStrV.pdf", "from_section": "§ 5", "to_docs": ["QStrG.pdf"], "to_sections": ["§ 12"]},
        {"from_chunk": "a", "to_chunks": [], "type": "external", "target": "https://example.org", "depth": 1,
         "decision": "skipped", "reason": "URL", "resolution": "none", "score": 0.0,
         "from_doc": "QStrV.pdf", "from_section": "§ 5", "to_docs": [], "to_sections": []},
    ]
    return {"final_report": report.model_dump(), "reference_edges": edges, "findings": [chunk, target]}


def test_html_escapes_all_document_text_and_links_pages(tmp_path):
    state = _state(tmp_path)
    report = FinalReport.model_validate(state["final_report"])
    page = render_html(report, state["reference_edges"])
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in page
    assert re.search(r'href="file://[^"]+QStrG\.pdf#page=2"', page)
    assert "Verfolgte Verweise (1)" in page
    # the answer's citation names the document and the quotation's section, and opens the PDF at the cited page
    assert len(re.findall(r'<a class="cite" href="file://[^"]+QStrG\.pdf#page=2"[^>]*>\[QStrG § 12, S\. 2\]</a>',
                          page)) == 2
    assert re.search(r'<li><a href="file://[^"]+QStrG\.pdf#page=2"[^>]*>QStrG\.pdf, S\. 2</a> \(§ 12\)', page)
    # only what the answer cites is a source; what it was written from besides is "read, not cited"
    sources = page.split("<h2>Quellen</h2>")[1].split("<h2>")[0]
    assert "QStrG.pdf" in sources.split("Gelesen, nicht zitiert")[0] and "QStrV.pdf" not in sources.split(
        "Gelesen, nicht zitiert")[0]
    assert "QStrV.pdf (§ 5)" in sources.split("Gelesen, nicht zitiert")[1]
    # why the reference was followed: from, reference, to, the gate's reason (escaped)
    assert "<th>Warum verfolgt</th>" in page and "QStrV.pdf § 5" in page and "&lt;script&gt;" in page.split(
        "Warum verfolgt")[1]


def test_markdown_has_sources_with_page_links_and_the_followed_reference(tmp_path):
    state = _state(tmp_path)
    text = render_markdown(FinalReport.model_validate(state["final_report"]), state["reference_edges"])
    assert "QStrG.pdf#page=2)" in text
    # the answer's citations name the document and section, each a link to the page; the cited pages are listed
    # under the answer by their file
    assert len(re.findall(r"\[\\\[QStrG § 12, S\. 2\\\]\]\(file://[^)]+QStrG\.pdf#page=2\)", text)) == 2
    assert re.search(r"^- \[QStrG\.pdf, S\. 2 \(§ 12\)\]\(file://[^)]+QStrG\.pdf#page=2\)", text, re.MULTILINE)
    assert "**Gelesen, nicht zitiert:** [QStrV.pdf (§ 5)](file://" in text
    assert "<script>" not in text and "\\<script\\>" in text  # document text cannot become HTML
    assert "§ 12 QStrG" in text and "## Qualität: 400/500" in text
    assert "https://example.org" not in text.split("## Verfolgte Verweise")[1].split("## Aufgaben")[0]


def test_the_task_summaries_are_in_both_renderings(tmp_path):
    state = _state(tmp_path)
    report = FinalReport.model_validate(state["final_report"])
    tasks = render_markdown(report, state["reference_edges"]).split("## Aufgaben")[1].split("## Ablauf")[0]
    assert "(Relevanz 0.75)" in tasks and "Zusammenfassung" in tasks
    assert REPORT["de"]["irrelevant"].format(count=1) in tasks
    assert "Randnotiz" not in tasks  # what was off the question is counted, not listed
    assert "Durchgang 1: fehlt" in tasks and "Durchgang 2: beantwortet" in tasks
    assert "während der Recherche hinzugefügt: Verweis" in tasks and "vorzeitig erledigt: schon beantwortet" in tasks
    page = render_html(report, state["reference_edges"]).split("<h2>Aufgaben</h2>")[1]
    assert "Zusammenfassung &lt;script&gt;" in page and "Randnotiz" not in page
    assert "während der Recherche hinzugefügt: Verweis &lt;script&gt;" in page and "vorzeitig erledigt" in page
    assert "<script>alert" not in page


def test_graph_nodes_are_sections_coloured_by_tier_and_edges_carry_the_decision(tmp_path):
    state = _state(tmp_path)
    graph = reference_graph(state["reference_edges"], context_entries(state))
    assert graph.nodes["QStrV.pdf § 5"]["tier"] == "primary"
    assert graph.nodes["QStrG.pdf § 12"]["tier"] == "secondary"
    assert graph.nodes["https://example.org"]["tier"] == "unresolved"
    assert graph.edges["QStrV.pdf § 5", "QStrG.pdf § 12"]["decision"] == "followed"
    html_text = graph_html(graph)
    assert "vis-network" in html_text or "vis.Network" in html_text
    assert "cdn.jsdelivr" not in html_text and "<script>alert" not in html_text


def test_tier_tables_have_one_frame_per_tier():
    state = {"findings": [{"document": "a.pdf", "section": "§ 1", "page": 3, "depth": 0, "relevance_score": 0.5,
                           "extracted_info": "x", "tier": "primary"},
                          {"document": "b.pdf", "section": "§ 2", "page": 1, "depth": 0, "relevance_score": 0.9,
                           "extracted_info": "y", "cites": "chunk-of-a", "tier": "primary"},
                          {"document": "c.pdf", "section": "§ 3", "page": 1, "depth": 0, "relevance_score": 0.7,
                           "extracted_info": "z", "tier": "primary", "dropped": True},
                          {"document": "d.pdf", "section": "§ 4", "page": 1, "depth": 0, "relevance_score": 0.6,
                           "extracted_info": "", "tier": "primary"}]}
    tables = tier_tables(state)
    assert set(tables) == {"primary", "secondary", "tertiary"}
    # a dropped finding and one without an extract are not in its tier
    assert isinstance(tables["primary"], pd.DataFrame) and list(tables["primary"]["doc"]) == ["b.pdf", "a.pdf"]
    assert tables["tertiary"].empty and "extract" in tables["tertiary"].columns
    assert list(tables["primary"]["cites"]) == ["chunk-of-a", ""]  # a backlink names what it cites


def test_tier_tables_name_sections_and_tasks_as_the_reader_sees_them():
    long_extract = "Die Aufsicht <prüft> jährlich. " * 30
    state = {"todo_list": {"items": [{"id": 0, "task": "A"}, {"id": 4, "task": "B"}, {"id": 5, "task": "C"}]},
             # task 4 found h2 again (stored with task 0); task 5 closed early: its search found h1 in the context
             "task_stats": [{"task_id": 4, "found_again": ["h2"]}],
             "todo_changes": [{"after_task": 4, "added": [], "closed": [{"id": 5, "task": "C", "found": ["h1"]}]}],
             "findings": [
                 {"document": "a.pdf", "section": "§ 1", "page": 3, "relevance_score": 0.9, "chunk_id": "h1",
                  "extracted_info": long_extract, "task_id": 4, "tier": "primary"},
                 {"document": "b.pdf", "section": "§ 7", "page": 1, "relevance_score": 0.5, "chunk_id": "h2",
                  "extracted_info": "kurz", "cited_by": "h1", "task_id": 0, "tier": "primary"}]}
    frame = tier_tables(state)["primary"]
    assert list(frame["cited_by"]) == ["", "a.pdf § 1"]  # the section, not the chunk's hash
    assert list(frame["task"]) == ["2, 3", "1, 2"]  # every task that found it, numbered 1..N in the plan, not ids
    page = tier_table_html(frame, "de", full_extracts(state, "primary"))
    assert ">Auszug</th>" in page and ">erreicht über</th>" in page
    assert "task_id" not in page and "cited_by" not in page  # no field names in the reader's table
    assert "<prüft>" not in page and "&lt;prüft&gt;" in page
    assert 'title="Die Aufsicht &lt;prüft&gt; jährlich.' in page  # the whole extract as a tooltip, escaped
    # alignment inline on every cell: an untrusted notebook drops <style> blocks, not style attributes
    cells = re.findall(r"<t[dh](?=[ >])(?: class=\"[^\"]*\")?( style=\"[^\"]*\")?", page)
    assert cells and all("text-align:left" in cell.replace(" ", "") for cell in cells)
    assert "<style" not in page and "overflow-wrap:anywhere" in page.replace(" ", "")
    # numbers, file names and section numbers never break; the extract wraps
    whole = re.findall(r'<td class="rh-whole" style="([^"]*)">([^<]*)<', page)
    assert {text for _, text in whole} >= {"a.pdf", "§ 1", "0.900"}
    assert all("white-space:nowrap" in style.replace(" ", "") for style, _ in whole)
    shown = frame.loc[0, "extract"]  # cut at a word, ended with "…", the whole text in the tooltip
    assert shown.endswith("…") and len(shown) <= 300 and "jährlich." in shown and not shown.endswith(" …")
    hostile = tier_table_html(frame, "en", ['" onmouseover="alert(1)', "x"])
    assert 'onmouseover="alert' not in hostile and ">Extract</th>" in hostile


def test_report_folder_round_trip(tmp_path):
    paths = write_report_folder(_state(tmp_path), tmp_path / "out")
    assert all(path.is_file() for path in paths.values())
    payload = json.loads(paths["report.json"].read_text(encoding="utf-8"))
    assert payload["report"]["quality_score"] == 400 and len(payload["reference_edges"]) == 2
    loaded = load_report_folder(tmp_path / "out")
    assert loaded["final_report"]["query"].startswith("Frage") and loaded["secondary_context"]
    assert payload["primary_context"][0]["document"] == "QStrV.pdf"  # the tiers as the seeds name them
    assert [search["task_id"] for search in payload["research_context"]["search_queries"]] == []
    assert pd.read_csv(paths["tier_secondary.csv"]).loc[0, "doc"] == "QStrG.pdf"
    # the saved graph page says what its colours mean, in the report's language, above the drawing
    page = paths["graph.html"].read_text(encoding="utf-8")
    legend = page.index("rh-graph-legend")
    assert legend < page.index('id="mynetwork"') and graph_text("de")["followed"] in page[legend:legend + 3000]


def test_folder_names_and_source_paths(tmp_path):
    assert slugify("Welche Dosisgrenzwerte gelten für Größen?") == "welche-dosisgrenzwerte-gelten-fur-grossen"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}_welche-grenzwerte-[0-9a-f]{8}", report_folder_name("Welche Grenzwerte?"))
    # two questions whose first 60 characters agree get folders of their own
    long = "Welche Grenzwerte gelten für beruflich exponierte Personen bei der Arbeit mit Quantenquellen"
    assert report_folder_name(long + " in Werkstätten?") != report_folder_name(long + " in Laboren?")
    path = resolve_source_path(DEMO_KB, "Recht", "QStrG.pdf")
    assert path and path.is_file()
    assert resolve_source_path(DEMO_KB, "Unbekannt", "QStrG.pdf") == path  # found by name anywhere in the KB
    assert resolve_source_path(DEMO_KB, "Recht", "missing.pdf") is None
    assert resolve_source_path(None, "Recht", "QStrG.pdf") is None
    assert relative_page_link(path, 3, DEMO_KB) == "Recht__db_inserted/QStrG.pdf#page=3"


def test_a_tier_table_gives_the_page_an_extract_starts_on_and_where_it_runs_on():
    from rabbithole_lab.viz.tables import extract_pages

    text = "§ 9 Pflichten\n(1) Der Betreiber meldet jeden Vorfall.\n(2) Die Meldung erfolgt binnen drei Tagen."
    entry = {"document": "X.pdf", "page": 4, "chunk_text": text, "page_map": f"0:4,{text.index('(2)')}:5"}
    assert extract_pages(entry | {"extracted_info": "(2) Die Meldung erfolgt binnen drei Tagen."}) == "5"
    assert extract_pages(entry | {"extracted_info": "(1) Der Betreiber meldet jeden Vorfall. (2) Die Meldung "
                                                    "erfolgt binnen drei Tagen."}) == "4–5"
    assert extract_pages(entry | {"extracted_info": "nicht im Text"}) == "4"


def test_the_report_records_the_clarification_and_the_removed_claims(tmp_path):
    state = _state(tmp_path)
    state["final_report"]["metadata"] |= {
        "clarification": {"added": ["Organdosis", EVIL], "excluded": ["Personen unter 18 Jahren"], "named": []},
        "invented_citations": [f"Erfunden.pdf p. 3: not retrieved {EVIL}"]}
    report = FinalReport.model_validate(state["final_report"])
    page = render_html(report, state["reference_edges"])
    clarified = page.split("<strong>Klärung:</strong>")[1].split("</p>")[0]
    assert "ergänzt: Organdosis" in clarified and "ausgeschlossen: Personen unter 18 Jahren" in clarified
    assert "genannt" not in clarified  # nothing named: not listed
    assert "Erfunden.pdf p. 3" in page.split("Entfernte Behauptungen")[1] and "<script>alert" not in page
    text = render_markdown(report, state["reference_edges"])
    assert "**Klärung:** ergänzt: Organdosis" in text and "Erfunden.pdf p. 3" in text and "<script>" not in text


def test_a_passage_search_found_names_the_followed_reference_that_reached_it_too():
    state = {"findings": [
        {"document": "v.pdf", "section": "§ 5", "page": 1, "relevance_score": 0.9, "chunk_id": "c5",
         "extracted_info": "nach § 12 des Gesetzes", "task_id": 0, "tier": "primary", "depth": 0},
        {"document": "g.pdf", "section": "§ 12", "page": 2, "relevance_score": 0.8, "chunk_id": "c12",
         "extracted_info": "Der Grenzwert beträgt 20 Millisievert.", "task_id": 0, "tier": "primary", "depth": 0}],
        "reference_edges": [
            {"from_doc": "v.pdf", "from_section": "§ 5", "to_docs": ["g.pdf"], "to_sections": ["§ 12"],
             "decision": "followed", "depth": 1, "target": "§ 12", "type": "section"},
            {"from_doc": "v.pdf", "from_section": "§ 5", "to_docs": ["g.pdf"], "to_sections": ["§ 13"],
             "decision": "skipped", "depth": 1, "target": "§ 13", "type": "section"}]}
    frame = tier_tables(state)["primary"].set_index("section")
    assert frame.loc["§ 12", "cited_by"] == "v.pdf § 5" and frame.loc["§ 5", "cites"] == "g.pdf § 12"
    assert frame.loc["§ 5", "cited_by"] == ""  # a skipped reference reached nothing


def test_the_markdown_answer_keeps_one_line_per_provision_when_rendered():
    """A batch notebook and research_report.html show report.md's Markdown: consecutive lines of the lead must not
    run together into one paragraph."""
    from markdown_it import MarkdownIt

    lead = ("Ergebnis: Maßgeblich ist § 12 QStrG. [QStrG.pdf, S. 2]\n"
            "§ 5 QStrV → § 12 QStrG: „Der Grenzwert beträgt 20 Millisievert.“ [QStrV.pdf, S. 1]\n"
            "In Betracht kommt auch § 6 QStrV. [QStrV.pdf, S. 1]")
    report = FinalReport(query="Frage", answer=lead, metadata={"language": "de"})
    shown = MarkdownIt().render(render_markdown(report, []).split("## Qualität")[0])
    answer = shown.split("</h2>", 2)[1].split("</p>")[0]  # the answer's paragraph; the sources list follows
    assert answer.count("<br") == 2
    lines = [re.sub(r"<[^>]+>", "", line).strip() for line in answer.split("<br />")]
    assert [line.split(" ", 1)[0] for line in lines] == ["Ergebnis:", "§", "In"]


def test_the_graph_is_shown_once_interactive_or_as_a_picture(tmp_path, monkeypatch):
    from IPython.display import Image

    from rabbithole_lab.viz import display as shown_module

    state = _state(tmp_path)
    for interactive in (True, False):
        shown: list = []
        monkeypatch.setattr(shown_module, "display", shown.append)
        shown_module.show_graph(state, interactive=interactive, graph_file="graph.html")
        pictures = [item for item in shown if isinstance(item, Image)]
        frames = [item for item in shown if isinstance(item, shown_module.GraphFrame)]
        assert (len(frames), len(pictures)) == ((1, 0) if interactive else (0, 1))


def test_how_a_passage_was_reached_reads_the_same_in_tables_graph_and_report(tmp_path):
    from rabbithole_lab.messages.reasons import reached_by
    from rabbithole_lab.viz.display import edge_table

    state = _state(tmp_path)  # § 5 QStrV found by search, § 12 QStrG one reference on
    by_search, one_on = reached_by(0, "de"), reached_by(1, "de")
    assert by_search != one_on and "1" in one_on and reached_by(2, "en") != reached_by(1, "en")
    tiers = tier_tables(state)
    primary, secondary = (tier_table_html(tiers[tier], "de") for tier in ("primary", "secondary"))
    assert f">{by_search}</td>" in primary and f">{html.escape(one_on)}</td>" in secondary
    references = edge_table(state, "de").to_html()
    assert html.escape(one_on) in references and "<td>1</td>" not in references.replace(" ", "")
    graph_page = graph_html(reference_graph(state["reference_edges"], context_entries(state)), language="de")
    assert one_on in json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", graph_page).group(1))[0]["title"]
    report = FinalReport.model_validate(state["final_report"])
    chains = render_markdown(report, state["reference_edges"]).split("## Verfolgte Verweise")[1].split("## ")[0]
    assert f"| {one_on} |".replace("(", "\\(").replace(")", "\\)") in chains or f"| {one_on} |" in chains
    assert f"<td>{html.escape(one_on)}</td>" in render_html(report, state["reference_edges"])
