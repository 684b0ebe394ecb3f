"""A task's summary says what the task found: never a bibliography line, a web address or a
document's title (issue 72, item 5). Written text, the real embedder."""

from __future__ import annotations

from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.text import points_elsewhere
from rabbithole_lab.records import ChunkWithInfo

FOUND = "Detectors for pulsed sources are calibrated every twelve months against a reference source."
TITLE = "Guide to Calibrating Pulsed Source Detectors"
POINTERS = ["Data are available at https://example.org/detectors/calibration.", "[Hansen2021] K. Hansen, Pulse"
            " counting, J. Detect. 4 (2021).", "See doi:10.1000/xyz123 for the raw counts."]


def test_pointers_to_other_text_are_told_from_statements():
    assert all(points_elsewhere(line) for line in POINTERS)
    assert points_elsewhere("Hansen, Pulse counting, J.", "\n".join(POINTERS))  # a piece of an entry
    assert not points_elsewhere(FOUND, "\n".join([FOUND, *POINTERS]))
    assert not points_elsewhere("(1) Der Grenzwert beträgt 20 Millisievert im Kalenderjahr.")


def test_a_summary_holds_the_finding_and_none_of_the_pointers(demo_kb):
    reasoner = ExtractiveReasoner(demo_kb.index.embedder)
    text = "\n".join([FOUND, *POINTERS])  # as a paper's text layer has them: a bibliography entry per line
    finding = ChunkWithInfo(chunk_text=text, extracted_info=text, document="Detector_Guide.pdf", page=3,
                            chunk_id="d", section="", relevance_score=0.8)
    title = ChunkWithInfo(chunk_text=TITLE, extracted_info=TITLE, document="Detector_Guide.pdf", page=1,
                          chunk_id="t", section="", relevance_score=0.9)  # a title page's chunk
    summary = reasoner.summarize_task("How are detectors calibrated?", "How are detectors for pulsed sources "
                                      "calibrated?", [title, finding], "en")
    assert "calibrated every twelve months" in summary.summary
    assert "https://" not in summary.summary and "Hansen" not in summary.summary and "doi:" not in summary.summary
    assert TITLE not in summary.summary  # a document's title is no finding
