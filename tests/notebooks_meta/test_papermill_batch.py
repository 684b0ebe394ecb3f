"""Papermill parameters of the report notebook, and batches of questions into report folders."""

from __future__ import annotations

import base64
import json
import os
import re
from datetime import date
from pathlib import Path
from urllib.parse import unquote

import nbformat
import papermill
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from nbformat.sign import NotebookNotary

from rabbithole_lab.batch.batch_run import REPORT_NOTEBOOK, read_questions, run_batch
from rabbithole_lab.cli.main import main
from tests.conftest import DEMO_KB, REPO

NOTEBOOKS = REPO / "notebooks"


def test_report_notebook_parameters_are_typed_and_plain():
    parameters = papermill.inspect_notebook(str(REPORT_NOTEBOOK))
    assert set(parameters) == {"question", "kb", "db", "collection", "answers", "approve_todo", "out_dir"}
    assert parameters["question"]["inferred_type_name"] == "str"
    assert parameters["answers"]["inferred_type_name"] == "list"
    assert parameters["approve_todo"]["default"] == '"auto"'


@pytest.mark.parametrize("name", ["research.ipynb", "research_report.ipynb", "reference_graph.ipynb",
                                  "build_kb.ipynb"])
def test_notebooks_are_thin(name):
    book = nbformat.read(REPORT_NOTEBOOK if name == "research_report.ipynb" else NOTEBOOKS / name, as_version=4)
    code = [cell for cell in book.cells if cell.cell_type == "code"]
    assert code[0].metadata.get("tags") == ["parameters"]
    for cell in code:
        logic = [line for line in cell.source.splitlines()
                 if line.strip() and not line.startswith(("from ", "import "))]
        assert len(logic) <= 8, f"{name}: move logic into the package"
        assert not any(line.lstrip().startswith(("def ", "class ", "for ", "while ", "if ")) for line in logic)


def test_parameter_injection_reaches_the_run(tmp_path, demo_db):
    out = tmp_path / "run"
    executed = tmp_path / "executed.ipynb"
    papermill.execute_notebook(str(REPORT_NOTEBOOK), str(executed), cwd=str(NOTEBOOKS), progress_bar=False,
                               parameters={"question": "How are detectors for quantum radiation calibrated?",
                                           "kb": str(DEMO_KB), "db": str(demo_db), "out_dir": str(out),
                                           "answers": ["only pulsed sources"]})
    book = nbformat.read(executed, as_version=4)
    injected = [c for c in book.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "only pulsed sources" in injected[0].source
    payload = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert payload["report"]["metadata"]["language"] == "en"
    answers = [t["content"] for t in payload["hitl_conversation_history"] if t["role"] == "user"]
    assert answers == ["only pulsed sources"]
    outputs = json.dumps([c.get("outputs", []) for c in book.cells])
    assert "image/png" in outputs and "rh-graph" in outputs


def test_batch_of_three_questions_with_one_failure_and_resume(tmp_path, demo_db):
    questions = tmp_path / "questions.txt"
    questions.write_text(
        "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?\n"
        '{"id": "q2", "question": "How are detectors for quantum radiation calibrated?"}\n'
        "Welche Pflichten hat der Betreiber?\n", encoding="utf-8")
    out = tmp_path / "reports"
    items = run_batch(questions, DEMO_KB, out, workers=2, db=demo_db, day=date(2026, 11, 22))
    assert [i.status for i in items] == ["done", "done", "done"]
    folders = sorted(re.sub(r"-[0-9a-f]{8}$", "", p.name) for p in out.iterdir() if p.is_dir())
    assert folders == ["2026-11-22_how-are-detectors-for-quantum-radiation-calibrated",
                       "2026-11-22_welche-grenzwerte-gelten-fur-beruflich-exponierte-personen",
                       "2026-11-22_welche-pflichten-hat-der-betreiber"]
    for folder in out.iterdir():
        if folder.is_dir():
            for name in ("research_report.ipynb", "report.md", "report.html", "report.json", "graph.html",
                         "tier_primary.csv", "tier_secondary.csv", "tier_tertiary.csv"):
                assert (folder / name).is_file(), (folder, name)
    index = (out / "index.html").read_text(encoding="utf-8")
    assert index.count("/report.html\"") == 3 and index.count("/graph.html\"") == 3
    # the Markdown index for JupyterLab: every link relative and to a file that is there
    markdown_links = re.findall(r"\]\(<([^>]+)>\)", (out / "index.md").read_text(encoding="utf-8"))
    assert len(markdown_links) == 12 and all((out / link).is_file() for link in markdown_links)
    executed = nbformat.read(next(out.glob("*/research_report.ipynb")), as_version=4)
    assert not NotebookNotary().check_signature(executed)  # not trusted unless asked (--trust)
    # named as the kernel that ran it names itself: JupyterLab, opening it, finds nothing to change
    assert executed.metadata.kernelspec["display_name"] == KernelSpecManager().get_kernel_spec("python3").display_name
    german = nbformat.read(next(out.glob("*_welche-grenzwerte-*/research_report.ipynb")), as_version=4)
    injected = next(c for c in german.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "beruflich exponierte Personen bei Quantenstrahlung" in injected.source and "f\\xfcr" not in injected.source
    outputs = json.dumps([c.get("outputs", []) for c in german.cells])
    assert "widget-view" not in outputs  # no progress widget that an executed notebook cannot show
    assert "Consider using IPython.display.IFrame" not in outputs and "rh-graph" in outputs
    _renders_untrusted(german, next(out.glob("*_welche-grenzwerte-*")))
    assert index.count("research_report.html") == 3  # the notebook as a page a browser shows, beside the .ipynb

    # a second run redoes nothing; a failing question is recorded and the rest still run
    questions.write_text(questions.read_text(encoding="utf-8") + "   \n{\"question\": \"\"}\n", encoding="utf-8")
    before = {p: p.stat().st_mtime for p in out.glob("*/report.json")}
    again = run_batch(questions, DEMO_KB, out, workers=1, db=demo_db, day=date(2026, 11, 22))
    assert [i.status for i in again] == ["skipped", "skipped", "skipped", "failed"]
    assert "empty question" in again[-1].error
    assert {p: p.stat().st_mtime for p in out.glob("*/report.json")} == before
    assert "failed" in (out / "index.html").read_text(encoding="utf-8")


def _renders_untrusted(book, folder: Path) -> None:
    """What an untrusted notebook shows: the graph as a PNG (SVG and scripts are not shown), citations as
    links relative to the notebook that reach the PDF page (the sanitiser drops file:// links), tables aligned
    by inline styles (it drops <style> blocks)."""
    outputs = [output for cell in book.cells for output in cell.get("outputs", [])]
    pngs = [output["data"]["image/png"] for output in outputs if "image/png" in output.get("data", {})]
    assert pngs and base64.b64decode(pngs[0]).startswith(b"\x89PNG")
    markdown = "\n".join(output["data"]["text/markdown"] for output in outputs
                         if "text/markdown" in output.get("data", {}))
    links = re.findall(r"\]\(([^)\s]+)\)", markdown)
    pages = [link for link in links if "#page=" in link]
    assert pages and "file://" not in markdown
    for link in pages:  # each opens an existing PDF, relative to the notebook's folder
        path, _, page = link.partition("#page=")
        assert not path.startswith("/") and (folder / unquote(path)).resolve().is_file() and int(page) >= 1
    assert "graph.html" in links and (folder / "graph.html").is_file()
    tables = [output["data"]["text/html"] for output in outputs
              if "rh-tier-table" in str(output.get("data", {}).get("text/html", ""))]
    assert tables and all("<style" not in table for table in tables)
    assert all("text-align:left" in cell for table in tables for cell in re.findall(r"<td[^>]*>", table))
    page = (folder / "research_report.html").read_text(encoding="utf-8")
    assert "<img" in page and "cdnjs" not in page and 'class="rh-graph"' not in page
    # headings, paragraphs and tables are rendered, not shown as escaped tag text; the legend keeps its colours
    assert not re.search(r"&lt;/?(?:h[1-6]|p|table|thead|th|td|tr)\b", page)
    assert "<h1" in page and "<table" in page and "background:#1b7837" in page.replace(" ", "")


def test_batch_with_two_workers_and_relative_paths_finishes_every_question(tmp_path, demo_db, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("q.txt").write_text("Welche Pflichten hat der Betreiber?\nWie oft sind Beschäftigte zu unterweisen?\n",
                             encoding="utf-8")
    kb = os.path.relpath(DEMO_KB, tmp_path)
    db = os.path.relpath(demo_db, tmp_path)
    code = main(["--env-file", "none", "batch", "q.txt", "--kb", kb, "--db", db, "--out", "out", "--workers", "2",
                 "--trust"])
    assert code == 0 and Path.cwd() == tmp_path  # the process directory never moved
    folders = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert len(folders) == 2 and all((f / "report.json").is_file() for f in folders)
    assert not any((f / "out").exists() for f in folders)  # no nested out/<q>/out/...
    for folder in folders:  # --trust signs them
        assert NotebookNotary().check_signature(nbformat.read(folder / "research_report.ipynb", as_version=4))


def test_questions_file_errors_are_clear(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": 1}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="q.jsonl:1: expected a JSON object with 'question'"):
        read_questions(bad)


def test_batch_cli_reports_a_failure_with_exit_code_1(tmp_path, demo_db, capsys):
    questions = tmp_path / "q.txt"
    questions.write_text('{"question": ""}\n', encoding="utf-8")
    code = main(["--env-file", "none", "batch", str(questions), "--kb", str(DEMO_KB), "--db", str(demo_db),
                 "--out", str(tmp_path / "out")])
    assert code == 1
    printed = capsys.readouterr().out
    assert "[failed]" in printed and "Index:" in printed


def test_a_batch_kernel_talks_over_a_private_short_socket_or_else_tcp(tmp_path, monkeypatch):
    import shutil
    import stat
    import tempfile

    from rabbithole_lab.batch import batch_kernel as batch

    local = batch.LocalKernelManager()
    try:
        assert local.transport == "ipc" and len(local.ip) + len("-ipc-65535") <= batch.MAX_SOCKET_PATH_CHARS
        assert stat.S_IMODE(os.stat(os.path.dirname(local.ip)).st_mode) == 0o700  # no other user's folder
    finally:
        shutil.rmtree(local._socket_dir, ignore_errors=True)
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    fallback = batch.LocalKernelManager()
    shutil.rmtree(fallback._socket_dir, ignore_errors=True)
    assert fallback.transport == "tcp"  # a socket path that long cannot be bound
