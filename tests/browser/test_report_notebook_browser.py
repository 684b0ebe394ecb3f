"""An executed batch notebook opened as shipped (untrusted) in JupyterLab in Chromium: the graph is a picture,
the citations open their PDF inside JupyterLab, the tier tables are left-aligned, and nothing runs.

Screenshots are written to test-artifacts/browser/report_notebook_untrusted/.
"""

from __future__ import annotations

import re
import shutil
from datetime import date

import pytest

from rabbithole_lab.batch.batch_run import run_batch
from tests.browser.conftest import ARTIFACTS, BROKEN_CELLS_JS, Shots
from tests.browser.test_workbench_browser import QUESTION, _open_notebook
from tests.conftest import DEMO_KB, REPO

pytestmark = pytest.mark.browser
OUT = REPO / "reports" / "browser-untrusted"  # inside JupyterLab's root (and the demo KB is too), gitignored


def test_an_untrusted_batch_notebook_shows_the_graph_links_and_aligned_tables(jupyter_lab, page, tmp_path):
    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    shutil.rmtree(OUT, ignore_errors=True)
    [item] = run_batch(questions, DEMO_KB, OUT, day=date(2026, 11, 25))  # not --trust
    assert item.status == "done", item.error
    shot = Shots(page, ARTIFACTS / "report_notebook_untrusted")
    try:
        _open_notebook(page, jupyter_lab, (item.folder / "research_report.ipynb").relative_to(REPO).as_posix())
        image = page.locator(".jp-RenderedImage img").first
        image.scroll_into_view_if_needed()
        image.wait_for(timeout=60_000)
        size = image.evaluate("img => [img.naturalWidth, img.naturalHeight]")
        assert size[0] > 200 and size[1] > 40  # a drawn graph, not "<IPython.core.display.SVG object>"
        assert page.get_by_text("<IPython.core.display").count() == 0
        shot("graph_as_png")
        # opened and its kernel started, the notebook is as it was saved: nothing marked modified
        page.wait_for_timeout(2_000)
        assert page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty").count() == 0
        # left-aligned cells: the inline styles survived the sanitiser
        aligns = page.evaluate("""() => [...document.querySelectorAll('table.rh-tier-table td')]
            .map(td => getComputedStyle(td).textAlign)""")
        assert aligns and set(aligns) == {"left"}, set(aligns)
        assert _broken_cells(page) == []
        table = page.locator("table.rh-tier-table").first
        table.scroll_into_view_if_needed()
        shot("tier_table")
        # a citation is a link JupyterLab opens itself: the PDF in a tab of this Lab, at the page
        citation = page.locator(".jp-RenderedMarkdown a[href*='.pdf']").first
        citation.scroll_into_view_if_needed()
        href = citation.get_attribute("href")
        assert href and not href.startswith("file:") and "#page=" in href
        pdf_name = href.split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1]
        tabs_before = len(page.context.pages)
        citation.click()
        page.locator(".lm-TabBar-tab", has_text=pdf_name).first.wait_for(timeout=30_000)
        assert len(page.context.pages) == tabs_before
        shot("citation_opened_in_lab")
        _index_opens_every_file_in_the_lab(page, jupyter_lab, shot)
        _the_static_page_renders(page, item.folder, shot)
    except Exception:
        shot("failure")
        raise


def _broken_cells(page) -> list[str]:
    return page.evaluate(BROKEN_CELLS_JS)


def _index_opens_every_file_in_the_lab(page, jupyter_lab, shot) -> None:
    """index.md, opened in the Lab: each link opens its file in a tab of this Lab (index.html's links cannot load
    there; the page says so and names index.md)."""
    index = (OUT / "index.md").relative_to(REPO).as_posix()
    page.goto(f"{jupyter_lab['base']}/lab/tree/{index}?token={jupyter_lab['token']}")
    links = page.locator(".jp-RenderedMarkdown td a")
    links.first.wait_for(timeout=60_000)
    names = [link.inner_text() for link in links.all()]
    assert names == ["report", "graph", "notebook (HTML)", "notebook (.ipynb)"], names
    shot("index_md")
    page.locator(".jp-RenderedMarkdown td a", has_text="notebook (.ipynb)").click()
    page.locator(".lm-TabBar-tab.jp-mod-current", has_text="research_report.ipynb").first.wait_for(timeout=60_000)
    page.locator(".jp-Notebook").first.wait_for(timeout=60_000)
    shot("index_md_opened_the_notebook")


def _the_static_page_renders(page, folder, shot) -> None:
    """research_report.html from the file system: headings and tables rendered (no tag shown as text), extracts
    left-aligned, the legend in colour, numbers and names whole."""
    page.goto((folder / "research_report.html").as_uri())
    page.locator("table.rh-tier-table").first.wait_for(timeout=30_000)
    shown = page.inner_text("body")
    assert not re.search(r"<\s*/?\s*(h[1-6]|p|table|thead|tbody|tr|th|td|div|span|a)\b", shown), shown[:500]
    assert page.locator("h1").count() >= 1 and page.locator("h2").count() >= 3
    aligns = page.evaluate("""() => [...document.querySelectorAll('table.rh-tier-table td.rh-extract')]
        .map(td => getComputedStyle(td).textAlign)""")
    assert aligns and set(aligns) == {"left"}
    swatches = page.evaluate("""() => [...document.querySelectorAll('.rh-graph-legend span span')]
        .map(s => getComputedStyle(s).backgroundColor).filter(c => c !== 'rgba(0, 0, 0, 0)')""")
    assert len(set(swatches)) >= 4, swatches  # the tiers' colours, not blank boxes
    assert _broken_cells(page) == []
    shot("static_page")
