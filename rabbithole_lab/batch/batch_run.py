"""Unattended runs: one research run as a function (used by the papermill notebook), and batches of
questions, each executed through the packaged `research_report.ipynb` with papermill into
`<out>/<date>_<slug>/`, with an index page. A finished run is not redone; a failed one is recorded
with its error while the others continue.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date
from importlib import resources
from pathlib import Path

from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.folder import (
    load_report_folder,
    question_slug,
    report_folder_name,
    write_report_folder,
)
from rabbithole_lab.report.notebook_page import index_html, index_markdown, write_notebook_html
from rabbithole_lab.report.view import cited_sources
from rabbithole_lab.usecase.input_files import read_text_input

logger = logging.getLogger(__name__)

# package data: found the same way in a checkout and in an installed wheel
REPORT_NOTEBOOK = Path(str(resources.files("rabbithole_lab").joinpath("notebooks", "research_report.ipynb")))
EXECUTED_NOTEBOOK = "research_report.ipynb"
NOTEBOOK_HTML = "research_report.html"


@dataclass
class ReportRun:
    folder: Path
    state: dict
    paths: dict[str, Path] = field(default_factory=dict)

    @property
    def report(self) -> dict:
        return self.state["final_report"]


def run_report(question: str, kb: str | Path, out_dir: str | Path, db: str | Path | None = None,
               collection: str | None = None, answers: list[str] | None = None, approve_todo: str = "auto",
               env_file: str | None = ".env") -> ReportRun:
    """Research `question` unattended (HITL answered by `answers`, then /end) and write the report folder."""
    from rabbithole_lab.settings import load_settings
    from rabbithole_lab.usecase.research_case import Research

    if approve_todo != "auto":
        raise ValueError(f"approve_todo must be 'auto' in an unattended run, not {approve_todo!r}")
    if not question.strip():
        raise ValueError("The question is empty.")
    settings = load_settings(env_file)
    kb_dir, folder = Path(kb), Path(out_dir)
    research = Research.open(settings, kb_dir, Path(db) if db else None, folder / "session.sqlite",
                             show_progress=False)
    try:
        status = research.run_unattended(question, collection, answers=list(answers or []), thread_id="report")
    finally:
        research.close()
    if status.kind != "done":
        raise RuntimeError(status.error or f"the run ended as {status.kind}")
    run = ReportRun(folder, status.state, write_report_folder(status.state, folder))
    if not str((status.report or {}).get("answer", "")).strip():  # the folder stays; the question counts as failed
        raise RuntimeError(f"the run ended without an answer (see {folder})")
    return run


def report_state(report_dir: str | Path, question: str | None = None, kb: str | Path | None = None) -> dict:
    """The saved state of a report folder; runs `question` on `kb` first when the folder has none."""
    folder = Path(report_dir)
    if not (folder / "report.json").is_file():
        if not (question and kb):
            raise FileNotFoundError(f"No report in {folder} (report.json missing)")
        run_report(question, kb, folder)
    return load_report_folder(folder)


# ---- batches ------------------------------------------------------------------------------------
@dataclass
class BatchItem:
    question: str
    folder: Path
    status: str  # done | skipped | failed
    error: str = ""


def read_questions(path: Path) -> list[str]:
    """One question per line, or JSONL lines with a "question" field (the eval format)."""
    questions = []
    for number, line in enumerate(read_text_input(Path(path), "questions file").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("{"):
            try:
                question = json.loads(line).get("question")
            except (json.JSONDecodeError, AttributeError):
                question = None
            if not isinstance(question, str):  # an empty one is a question that fails, recorded with the rest
                raise ValueError(f"{path}:{number}: expected a JSON object with 'question' (a text)")
            questions.append(question)
        else:
            questions.append(line)
    if not questions:
        raise ValueError(f"{path}: no questions (one per line, or JSONL lines with 'question')")
    return questions


def finished_folder(out_root: Path, question: str) -> Path | None:
    """A folder an earlier batch run finished for `question` (its executed notebook and report are there);
    a report the workbench saved (`…_saved`) is not one."""
    for candidate in sorted(out_root.glob(f"*_{question_slug(question)}")):
        if (candidate / "report.json").is_file() and (candidate / REPORT_NOTEBOOK.name).is_file():
            return candidate
    return None


def _readable_parameters() -> None:
    """Parameters written into executed notebooks as Python literals that keep their letters: papermill's
    own translator escapes every non-ASCII character ("f\\xfcr" for "für")."""
    from papermill.translators import PythonTranslator, papermill_translators

    class ReadablePythonTranslator(PythonTranslator):
        @classmethod
        def translate_str(cls, val):
            return repr(val)  # a valid literal; quotes and control characters escaped, letters kept

    papermill_translators.register("python", ReadablePythonTranslator)


def _name_the_kernel_that_ran(book) -> None:
    """The notebook's kernelspec as the kernel that ran it names itself: papermill keeps the source notebook's,
    and JupyterLab, opening the notebook, writes the running kernel's own and marks it modified."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    kernelspec = book.metadata.get("kernelspec") or {}
    try:
        spec = KernelSpecManager().get_kernel_spec(kernelspec.get("name", "python3"))
    except NoSuchKernel:
        return
    kernelspec.update(display_name=spec.display_name, language=spec.language)
    book.metadata["kernelspec"] = kernelspec


def _execute(question: str, folder: Path, kb: Path, db: Path | None, notebook: Path, kernel: str | None,
             trust: bool) -> None:
    """One question through the report notebook. Every path is absolute and the process directory never
    changes (papermill's `cwd` would change it for every worker thread at once)."""
    import nbformat
    import papermill
    from nbformat.sign import NotebookNotary

    folder.mkdir(parents=True, exist_ok=True)
    executed = folder / EXECUTED_NOTEBOOK
    _readable_parameters()
    papermill.execute_notebook(
        str(notebook), str(executed), progress_bar=False, kernel_name=kernel,
        kernel_manager_class="rabbithole_lab.batch.batch_kernel.LocalKernelManager",
        parameters={"question": question, "kb": str(kb), "db": str(db) if db else "",
                    "collection": "", "answers": [], "approve_todo": "auto", "out_dir": str(folder)})
    book = nbformat.read(executed, as_version=4)
    _name_the_kernel_that_ran(book)
    nbformat.write(book, executed)
    if trust:  # only when asked: a trusted notebook runs its HTML (the interactive graph) when opened
        NotebookNotary().sign(book)
    try:
        write_notebook_html(executed, folder / NOTEBOOK_HTML)
    except Exception as exc:  # the executed notebook and the report stand; only their static page is missing
        logger.warning("No HTML page of %s (nbconvert: %s); the notebook and report.html are there", executed,
                       " ".join(str(exc).split())[:300])


def run_batch(questions_file: Path, kb: Path, out_root: Path, workers: int = 1, db: Path | None = None,
              notebook: Path = REPORT_NOTEBOOK, kernel: str | None = None,
              day: date | None = None, trust: bool = False) -> list[BatchItem]:
    """Run every question of the file; returns one item per question and writes `out_root/index.html`.
    `trust` signs the executed notebooks (their interactive graph then shows when opened)."""
    questions = read_questions(questions_file)
    kb, out_root, notebook = Path(kb).resolve(), Path(out_root).resolve(), Path(notebook).resolve()
    db = Path(db).resolve() if db else None
    out_root.mkdir(parents=True, exist_ok=True)

    def one(question: str) -> BatchItem:
        done = finished_folder(out_root, question)
        if done is not None:  # said, never silent: the CLI prints why and how to run it again
            return BatchItem(question, done, "skipped", "already researched by an earlier batch run; delete the "
                                                        "folder to research it again")
        folder = out_root / report_folder_name(question, day)
        try:
            if not question.strip():
                raise ValueError("empty question")
            _execute(question, folder, kb, db, notebook, kernel, trust)
            (folder / "error.txt").unlink(missing_ok=True)
            return BatchItem(question, folder, "done")
        except Exception as exc:  # one failed question must not stop the batch
            message = _short_error(exc)
            logger.error("Question failed: %s: %s", question, message)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "error.txt").write_text(message + "\n", encoding="utf-8")
            return BatchItem(question, folder, "failed", message)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        items = list(pool.map(one, questions))
    write_index(out_root, items)
    return items


def _short_error(exc: Exception) -> str:
    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # papermill errors end with the exception line of the failing cell
    tail = next((line for line in reversed(lines) if ("Error" in line or "Exception" in line)),
                lines[-1] if lines else "")
    return f"{type(exc).__name__}: {tail}"[:500]


def write_index(out_root: Path, items: list[BatchItem]) -> Path:
    """`index.html` for a browser and `index.md` for JupyterLab, one row per question with its files."""
    rows = []
    for item in items:
        relative = item.folder.relative_to(out_root).as_posix()
        quality = ""
        report_json = item.folder / "report.json"
        if report_json.is_file():
            report = json.loads(report_json.read_text(encoding="utf-8"))["report"]
            cited = len(cited_sources(FinalReport.model_validate(report)))
            quality = f"{report.get('quality_score', 0)}/500, {cited} sources cited"
        links = [(f"{relative}/{name}", label)
                 for name, label in (("report.html", "report"), ("graph.html", "graph"),
                                     (NOTEBOOK_HTML, "notebook (HTML)"), (EXECUTED_NOTEBOOK, "notebook (.ipynb)"))
                 if (item.folder / name).is_file()]
        rows.append((item.question, item.status, links, item.error or quality))
    (out_root / "index.md").write_text(index_markdown(rows), encoding="utf-8")
    index = out_root / "index.html"
    index.write_text(index_html(rows), encoding="utf-8")
    return index
