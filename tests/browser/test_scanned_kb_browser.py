"""A knowledge base with a scanned ordinance, researched in the workbench (issue 74): the scan is read by OCR on
ingest, its "nach § 12 des Quantenstrahlenschutzgesetzes" is followed into the text law, and a citation of the scan
opens its page with the quote marked from the OCR word boxes.

The scan is made here from the demo KB's QStrV.pdf (`bench/scanned_copy.py`); the workbench notebook is the
project's own, with its knowledge-base parameter pointed at the scratch folder.
"""

from __future__ import annotations

import re
import shutil

import pytest

from bench.scanned_copy import scanned_copy
from tests.browser.conftest import ARTIFACTS, Shots
from tests.browser.test_workbench_browser import (
    SLOW_MS,
    _open_notebook,
    _run_all,
    research_unattended,
    wait_for_workbench,
    workbench_on,
)
from tests.conftest import DEMO_KB, REPO

pytestmark = [pytest.mark.browser, pytest.mark.skipif(shutil.which("tesseract") is None, reason=(
    "needs Tesseract (apt-get install tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng; .ci/run installs it)"))]
QUESTION = "Was gilt, wenn ein Grenzwert für beruflich exponierte Personen überschritten wird?"
NOTEBOOK_FOLDER = REPO / "test-artifacts" / "scanned-kb"  # inside the Lab's root (git-ignored)


def test_a_scanned_ordinance_is_researched_followed_and_its_quote_marked_in_the_workbench(jupyter_lab, page,
                                                                                           tmp_path):
    kb = tmp_path / "kb"
    (kb / "Recht__db_inserted").mkdir(parents=True)
    shutil.copy2(DEMO_KB / "Recht__db_inserted" / "QStrG.pdf", kb / "Recht__db_inserted" / "QStrG.pdf")
    scanned_copy(DEMO_KB / "Recht__db_inserted" / "QStrV.pdf", kb / "Recht__db_inserted" / "QStrV.pdf")
    shutil.copy2(DEMO_KB / "document_registry.json", kb / "document_registry.json")
    shot = Shots(page, ARTIFACTS / "scanned_kb")
    try:
        _open_notebook(page, jupyter_lab, workbench_on(kb, NOTEBOOK_FOLDER / "research_scanned.ipynb"))
        _run_all(page)
        wait_for_workbench(page, jupyter_lab)
        shot("workbench_ready")
        research_unattended(page, QUESTION)
        answer = page.locator(".rh-answer").first
        answer.scroll_into_view_if_needed()
        shot("answer")

        # the scanned ordinance's "nach § 12" was followed into the text law: § 12's row names the scan's
        # sections it was reached over
        # read once the tables are laid out: a table still hidden gives its text without the cells' tabs
        page.locator("table.rh-tier-table").first.wait_for(state="visible", timeout=SLOW_MS)
        tiers = "\n".join(page.locator("table.rh-tier-table").all_inner_texts())
        assert re.search(r"^QStrG\.pdf\t§ 12\t.*QStrV\.pdf § \d", tiers, re.MULTILINE), tiers[:2000]
        # a quote from the scan is cited with its section and page, and opens its page with the quote marked
        citation = page.locator("a.rh-cite", has_text=re.compile(r"^\[QStrV ")).first
        citation.wait_for(timeout=30_000)
        assert re.fullmatch(r"\[QStrV § \d+, S\. 1\]", citation.inner_text().strip())
        citation.click()
        viewer = page.locator(".rh-pdf-view").first
        viewer.locator(".rh-pdf-title").first.wait_for(timeout=60_000)  # drawn with the page, after the image
        viewer.scroll_into_view_if_needed()
        shot("scan_quote_marked")
        assert "QStrV" in viewer.locator(".rh-pdf-title").first.inner_text()
        assert "Zitat markiert" in viewer.inner_text(), viewer.inner_text()
    except Exception:
        shot("failure")
        raise
    finally:
        shutil.rmtree(NOTEBOOK_FOLDER, ignore_errors=True)
