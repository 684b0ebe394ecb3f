"""The issue's done-when run on the shared corpus: `rabbithole research` on a real law question, its report, and
its reference graph opened in Chromium: the followed chain readable at the scale it opens with.

Screenshots are written to test-artifacts/browser/corpus_graph/.
"""

from __future__ import annotations

import json

import pytest

from rabbithole_lab.cli.main import main
from rabbithole_lab.viz.reference_graph import LABEL_FONT_PX, MIN_LABEL_PX
from tests.answer_reading import framing_language, lead, provisions_named
from tests.browser.conftest import ARTIFACTS
from tests.conftest import CORPUS

pytestmark = pytest.mark.browser


def test_done_when_german_report_on_the_shared_corpus(tmp_path, corpus_db, monkeypatch, browser):
    if not CORPUS.is_dir():
        pytest.skip("needs ../shared/corpus/de-strahlenschutz")
    monkeypatch.setenv("LLM_PROVIDER", "extractive")
    out = tmp_path / "corpus-report"
    code = main(["--env-file", "none", "research", "Welche Dosisgrenzwerte gelten für beruflich exponierte Personen?",
                 "--kb", str(CORPUS), "--db", str(corpus_db), "--no-hitl", "--out", str(out),
                 "--sessions", str(tmp_path / "s.sqlite"), "--no-progress"])
    assert code == 0
    payload = json.loads((out / "report.json").read_text(encoding="utf-8"))
    report = payload["report"]
    assert report["metadata"]["language"] == "de" and framing_language(lead(report["answer"])) == "de"
    assert provisions_named(lead(report["answer"])) and "20 Millisievert" in report["answer"]
    assert report["sources"] and all(s["page_number"] >= 1 and "#page=" in s["link"] for s in report["sources"])
    followed = [e for e in payload["reference_edges"] if e["decision"] == "followed"]
    assert followed
    assert "verfolgt: " in (out / "graph.html").read_text(encoding="utf-8").replace("\\n", " ")
    _graph_reads_at_its_opening_scale(out / "graph.html", browser)


def _graph_reads_at_its_opening_scale(graph_page, browser) -> None:
    """The graph as a reviewer opens it: every label drawn at MIN_LABEL_PX or more, the view starting at the
    question, the followed chain drawn; a screenshot for the record."""
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    page = context.new_page()
    try:
        page.goto(graph_page.as_uri())
        page.wait_for_function("() => typeof network !== 'undefined' && network.getScale() > 0", timeout=30_000)
        page.wait_for_timeout(1_000)
        scale, nodes = page.evaluate("() => [network.getScale(), Object.keys(network.getPositions()).length]")
        assert nodes >= 5 and scale * LABEL_FONT_PX >= MIN_LABEL_PX - 0.01, (scale, nodes)
        canvas = page.locator("canvas").first.bounding_box()
        root = page.evaluate("() => network.canvasToDOM(network.getPositions(['\u2753'])['\u2753'])")
        assert 0 <= root["x"] <= canvas["width"] and 0 <= root["y"] <= canvas["height"]  # the question in view
        # no two sections' boxes (each holding its label) overlap
        boxes = page.evaluate("() => network.body.nodeIndices.map(id => [id, network.getBoundingBox(id)])")
        overlapping = [(a, b) for index, (a, box_a) in enumerate(boxes) for b, box_b in boxes[index + 1:]
                       if box_a["left"] < box_b["right"] and box_b["left"] < box_a["right"]
                       and box_a["top"] < box_b["bottom"] and box_b["top"] < box_a["bottom"]]
        assert len(boxes) >= 5 and not overlapping, overlapping
        folder = ARTIFACTS / "corpus_graph"
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / "graph.png"))
    finally:
        context.close()
