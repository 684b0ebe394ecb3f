"""Sessions and reports belong to the project, never to a knowledge-base folder (issue 72, item 1).

A researcher's collection may be read-only or a colleague's: the CLI and the workbench keep their one sessions
file and their saved reports under the project's `reports/` (the first folder up with a pyproject.toml or
.git), the index of a read-only folder lives in the machine's cache, and a session started in either front end
is listed and resumed in the other. The CLI is the installed console script; the workbench is the one the
notebook opens (`Workbench.open`), run from the project's `notebooks/` folder as JupyterLab runs it.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

from rabbithole_lab.project import project_root, reports_dir, sessions_file

SCRIPT = Path(sys.executable).parent / "rabbithole"
# written for this test
LIGHTHOUSE = ("§ 1 Leuchtfeuer\nDas Leuchtfeuer des Leuchtturms wird jede Nacht von Sonnenuntergang bis "
              "Sonnenaufgang betrieben. Der Wärter prüft die Linse wöchentlich.\n\n"
              "§ 2 Nebelhorn\nBei Sichtweiten unter einer Seemeile ertönt das Nebelhorn alle dreißig Sekunden; "
              "der Wärter schaltet es nach § 1 ein.\n")


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(path.relative_to(root)): (path.stat().st_size, path.stat().st_mtime_ns) for path in root.rglob("*")}


def _read_only(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True) + [root]:
        path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH | (
            stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if path.is_dir() else 0))


def _cli(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), "--env-file", "none", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL, env=env)


def test_the_project_is_found_from_a_subfolder_and_the_reports_folder_can_be_moved(tmp_path, monkeypatch):
    project = tmp_path / "projekt"
    (project / "notebooks").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    monkeypatch.chdir(project / "notebooks")
    assert project_root() == project.resolve()
    assert sessions_file() == project.resolve() / "reports" / "sessions.sqlite"
    assert reports_dir(tmp_path / "anderswo") == tmp_path / "anderswo"
    lone = tmp_path / "lose"
    lone.mkdir()
    monkeypatch.chdir(lone)
    assert project_root() == lone.resolve()  # no project above: the working directory is it


def test_a_read_only_collection_is_researched_saved_and_resumed_across_front_ends_without_a_write_to_it(
        tmp_path, monkeypatch):
    from rabbithole_lab.ui.workbench import Workbench

    shared = tmp_path / "geteilt"
    folder = shared / "kb" / "Recht__db_inserted"
    folder.mkdir(parents=True)
    (folder / "leuchtturm.md").write_text(LIGHTHOUSE, encoding="utf-8")
    _read_only(shared)
    project = tmp_path / "projekt"
    (project / "notebooks").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    cache = tmp_path / "cache"
    env = {**os.environ, "CI": "true", "XDG_CACHE_HOME": str(cache), "OLLAMA_BASE_URL": "http://127.0.0.1:9"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("RABBITHOLE_REPORTS_DIR", raising=False)
    before = _tree(shared)
    kb = shared / "kb"

    # the workbench, in the project's notebooks/ folder: it ingests (into the machine's cache) and starts a run
    # that waits for the clarification
    monkeypatch.chdir(project / "notebooks")
    bench = Workbench.open(kb, env_file=None)
    assert isinstance(bench, Workbench), getattr(bench, "message", bench)
    try:
        bench.backend.start("Wie oft prüft der Wärter die Linse?", None)
        assert bench.backend.wait(300)
        started = bench.backend.sessions()
        assert len(started) == 1 and started[0]["phase"] != "done"
        thread = started[0]["thread_id"]
    finally:
        bench.backend.close()
    store = project / "reports" / "sessions.sqlite"
    assert store.is_file()

    # the CLI at the project's root resumes that session from the same store, without being told the folder
    answers = project / "antworten.txt"
    answers.write_text("/end\n", encoding="utf-8")
    resumed = _cli("research", "--resume", thread, "--answers", str(answers), "--approve-todo", "auto",
                   "--no-progress", cwd=project, env=env)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    written = [path for path in (project / "reports").iterdir() if path.is_dir()]
    assert len(written) == 1 and (written[0] / "report.json").is_file()
    assert json.loads((written[0] / "report.json").read_text(encoding="utf-8"))["report"]["answer"].strip()

    # a session the CLI starts is listed in the workbench, and its answer saved there under the project's reports/
    done = _cli("research", "Wann ertönt das Nebelhorn?", "--kb", str(kb), "--no-hitl", "--no-progress",
                cwd=project, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    # the summary counts what the answer cites, as its Sources list does ("5 sources" stood for 2 cited)
    folder = next(path for path in (project / "reports").iterdir() if path.is_dir() and path not in written)
    answer = json.loads((folder / "report.json").read_text(encoding="utf-8"))["report"]["answer"]
    cited_pages = set(re.findall(r"\[([^\[\],]+?), S\. (\d+)", answer))
    assert cited_pages and f"{len(cited_pages)} sources cited" in done.stdout, (cited_pages, done.stdout[-800:])
    bench = Workbench.open(kb, env_file=None)
    try:
        listed = {session["thread_id"]: session for session in bench.backend.sessions()}
        assert thread in listed and len(listed) == 2
        cli_thread = next(key for key in listed if key != thread)
        finished = []
        bench.backend.add_listener(lambda event: finished.append(event.status) if event.status else None)
        bench.backend.resume(cli_thread)
        assert bench.backend.wait(300)
        assert finished and finished[-1].kind == "done"
        saved = bench.save_report()  # the workbench's "Bericht speichern"
    finally:
        bench.backend.close()
    assert saved is not None and saved.parent == (project / "reports").resolve()
    assert (saved / "report.json").is_file()

    # nothing was written into or beside the collection; the index is in the machine's cache
    assert _tree(shared) == before
    assert not (tmp_path / "reports").exists() and not (shared / "reports").exists()
    assert any(cache.rglob("chroma.sqlite3"))
