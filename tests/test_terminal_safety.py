"""No document, file name, question or model output writes to the terminal: escape sequences (OSC 0 sets the
window title, OSC 52 writes the clipboard, CSI clears the screen or colours) pass through the installed
`rabbithole` script's ingest, search, trail, research and batch, and report.md, and come out visible and
inert."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rabbithole_lab.support.terminal_safety import SafeTextStream, safe_standard_streams, visible_controls
from tests.conftest import DEMO_KB

TITLE = "\x1b]0;owned-title\x07"
CLIPBOARD = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
CLEAR = "\x1b[2J\x1b[31m"
C1_CSI = "\x9b1;31m"
BIDI = "\u202e"  # right-to-left override: "evil\u202efdp.md" reads as "evilmd.pdf"
HOSTILE_TEXT = (f"§ 1 Grenzwerte bei Quantenstrahlung{TITLE}\n"
                f"Für Messtechniker der Sternwarte gilt bei Quantenstrahlung ein Grenzwert von 7 Millisievert "
                f"im Kalenderjahr.{CLIPBOARD} Die Aufsicht prüft {BIDI}jährlich.{CLEAR}{C1_CSI}\n")
HOSTILE_NAME = "Sternwarte\x1b]0;named\x07Merkblatt.txt"
QUESTION = f"Welcher Grenzwert gilt für Messtechniker der Sternwarte bei Quantenstrahlung?{TITLE}"
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_control_characters_become_visible_and_text_stays():
    shown = visible_controls(f"a{TITLE}b{C1_CSI}c\r\nd\te")
    assert not RAW_CONTROL.search(shown)
    assert shown.startswith("a␛]0;owned-title␇b") and "<U+009B>1;31m" in shown and "c\nd\te" in shown


def test_the_safe_streams_wrap_once_and_are_restored(capsys):
    before = sys.stdout
    with safe_standard_streams():
        with safe_standard_streams():
            assert isinstance(sys.stdout, SafeTextStream) and not isinstance(sys.stdout.raw, SafeTextStream)
            sys.stdout.write(f"x{CLEAR}y\n")
    assert sys.stdout is before
    assert capsys.readouterr().out == "x␛[2J␛[31my\n"


def _rabbithole(*args: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "rabbithole"  # the installed console script
    done = subprocess.run([str(script), "--env-file", "none", *args], capture_output=True, text=True,
                          env=os.environ | env, cwd=cwd, timeout=900)
    for stream in (done.stdout, done.stderr):
        assert not RAW_CONTROL.search(stream), f"raw control character in the output of {args[0]}: {stream!r}"
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.fixture(scope="module")
def hostile_kb(tmp_path_factory) -> Path:
    kb = tmp_path_factory.mktemp("terminal-kb")
    shutil.copytree(DEMO_KB / "Recht__db_inserted", kb / "Recht__db_inserted")
    (kb / "Recht__db_inserted" / HOSTILE_NAME).write_text(HOSTILE_TEXT, encoding="utf-8")
    return kb


def test_every_command_shows_document_file_and_question_escapes_inert(hostile_kb, tmp_path):
    env = {"LLM_PROVIDER": "extractive"}
    db = str(hostile_kb / "database")
    ingested = _rabbithole("ingest", str(hostile_kb), env=env, cwd=tmp_path)  # plain progress names files
    assert "␛]0;named␇" in ingested.stdout + ingested.stderr  # the file name was shown, made visible

    found = _rabbithole("search", "Messtechniker Sternwarte Grenzwert", "--kb", str(hostile_kb), "--db", db,
                        env=env, cwd=tmp_path)
    assert "␛]0;owned-title␇" in found.stdout  # the document's text was printed, its title escape inert

    _rabbithole("trail", "Messtechniker Sternwarte Grenzwert", "--kb", str(hostile_kb), "--db", db,
                env=env, cwd=tmp_path)

    out = tmp_path / "report"
    researched = _rabbithole("research", QUESTION, "--kb", str(hostile_kb), "--db", db, "--no-hitl",
                             "--no-progress", "--sessions", str(tmp_path / "s.sqlite"), "--out", str(out),
                             env=env, cwd=tmp_path)
    assert "owned-title␇" in researched.stderr  # the task titles made from the question, made visible
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "owned-title␇" in markdown and not RAW_CONTROL.search(markdown)
    # every file of the report folder is safe to `cat` or `less -R`: the HTML pages, the tables, the JSON
    written = [path for path in out.iterdir() if path.suffix in (".html", ".csv", ".json")]
    assert {path.name for path in written} >= {"report.html", "graph.html", "report.json", "tier_primary.csv"}
    for path in written:
        assert not RAW_CONTROL.search(path.read_text(encoding="utf-8")), path.name

    questions = tmp_path / "questions.txt"
    questions.write_text(QUESTION + "\n", encoding="utf-8")
    batch = _rabbithole("batch", str(questions), "--kb", str(hostile_kb), "--db", db, "--out",
                        str(tmp_path / "batch"), env=env, cwd=tmp_path)
    assert "␛]0;owned-title␇" in batch.stdout  # the question as printed, made visible
    [folder] = [path for path in (tmp_path / "batch").iterdir() if path.is_dir()]
    assert not RAW_CONTROL.search((folder / "report.md").read_text(encoding="utf-8"))
