"""A quoted reference to a section that is not there is said where the reader reads: the answer marks it
beside the quote, report.md, report.html and graph.html list it with its reason, and a section the law marks
repealed ("§§ 14 bis 16 (weggefallen)") reads as repealed, not as missing. Before, only report.json knew."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rabbithole_lab.reasoning.checks.quality import statements
from tests.conftest import DEMO_KB

# written for this test: an ordinance of the demo knowledge base's law that cites a section the law lacks and one
# of its own that it repealed
ORDINANCE = """# Quantenprüfverordnung

§ 1 Prüfung der Quantenquellen

Für die jährliche Prüfung der Quantenquellen gilt § 999 QStrG entsprechend.
Die Prüfung der Quantenquellen ist vom Betreiber jährlich durchzuführen.

§ 2 Prüfbericht

Über die Prüfung der Quantenquellen ist ein Prüfbericht zu erstellen; für seinen Inhalt gilt § 15 QPrüfV.

§§ 14 bis 16 (weggefallen)

§ 17 Inkrafttreten

Diese Verordnung tritt am Tag nach der Verkündung in Kraft.
"""
QUESTION = "Wie oft ist die Prüfung der Quantenquellen durchzuführen und was gilt für den Prüfbericht?"


@pytest.fixture(scope="module")
def researched(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("unresolved")
    kb = root / "kb"
    shutil.copytree(DEMO_KB, kb, ignore=shutil.ignore_patterns("database", "reports", "Technik__db_inserted"))
    (kb / "Recht__db_inserted" / "QPrüfV.md").write_text(ORDINANCE, encoding="utf-8")
    script = Path(sys.executable).parent / "rabbithole"  # the installed console script
    done = subprocess.run([str(script), "--env-file", "none", "research", QUESTION, "--kb", str(kb), "--db",
                           str(root / "db"), "--no-hitl", "--no-progress", "--out", str(root / "report"), "--sessions",
                           str(root / "s.sqlite")], capture_output=True, text=True, timeout=600, cwd=root,
                          env={**os.environ, "CI": "true"}, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return root / "report"


def test_the_answer_marks_the_quote_whose_reference_leads_nowhere(researched):
    answer = json.loads((researched / "report.json").read_text(encoding="utf-8"))["report"]["answer"]
    quoting = [line for line in answer.splitlines() if "§ 999 QStrG entsprechend" in line]
    assert quoting and all("⚠ § 999 QStrG" in line and "nicht vorhanden" in line for line in quoting)
    repealed = [line for line in answer.splitlines() if "gilt § 15 QPrüfV" in line]
    assert all("weggefallen" in line and "nicht vorhanden" not in line for line in repealed)
    # the note is the reader's, not a claim the check counts as an uncited statement
    assert not any(statement.quote.startswith("(⚠") for statement in statements(answer))


@pytest.mark.parametrize("shown", ["report.md", "report.html", "graph.html"])
def test_every_page_the_reader_opens_lists_the_references_without_a_target(researched, shown):
    text = (researched / shown).read_text(encoding="utf-8")
    assert "Verweise ohne Ziel" in text
    assert "§ 999 QStrG" in text and "Abschnitt in QStrG nicht vorhanden" in text
    assert "§ 15 QPrüfV" in text and "Abschnitt in QPrüfV weggefallen" in text


def test_a_repealed_range_is_no_citation(researched):
    edges = json.loads((researched / "report.json").read_text(encoding="utf-8"))["reference_edges"]
    assert not any("14" in edge["target"] and "16" in edge["target"] for edge in edges)
    assert {edge["resolution"] for edge in edges if "§ 15" in edge["target"]} == {"section_repealed"}
