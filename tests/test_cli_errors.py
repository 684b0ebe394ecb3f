"""Every error a user can cause on the command line: one line that says what to do, exit code 2, no
traceback (unless --debug), and nothing created on disk."""

from __future__ import annotations

import json

import pytest

from rabbithole_lab.cli import main as cli_main
from tests.conftest import DEMO_KB


def _run(capsys, *args: str) -> tuple[int, str]:
    code = cli_main(["--env-file", "none", *args])
    err = capsys.readouterr().err.strip()
    return code, err


def _one_line_error(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_missing_knowledge_base_is_named_and_not_created(tmp_path, capsys):
    missing = tmp_path / "missing"
    code, err = _run(capsys, "search", "Grenzwert", "--kb", str(missing))
    assert code == 2 and "knowledge-base folder not found" in _one_line_error(err)
    assert not missing.exists()
    code, err = _run(capsys, "ingest", str(missing))
    assert code == 2 and not missing.exists()


def test_searching_without_an_index_does_not_create_one(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    code, err = _run(capsys, "search", "Grenzwert", "--kb", str(kb))
    assert code == 2 and "run `rabbithole ingest" in _one_line_error(err) and not (kb / "database").exists()


def test_a_non_positive_count_is_a_usage_error(capsys, demo_db):
    with pytest.raises(SystemExit) as stop:
        cli_main(["--env-file", "none", "search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(demo_db), "--k", "-5"])
    assert stop.value.code == 2 and "must be 1 or more" in capsys.readouterr().err


def test_an_unknown_collection_lists_the_ones_there_are(capsys, demo_db):
    code, err = _run(capsys, "search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(demo_db), "--collection", "Nope")
    assert code == 2 and "unknown collection 'Nope'; this knowledge base has: Recht, Technik" in _one_line_error(err)


def test_a_database_path_that_is_a_file_is_refused(tmp_path, capsys):
    db = tmp_path / "db.txt"
    db.write_text("not a folder")
    code, err = _run(capsys, "ingest", str(DEMO_KB), "--db", str(db))
    assert code == 2 and "is a file; give a folder" in _one_line_error(err) and db.read_text() == "not a folder"


@pytest.mark.parametrize("line", ["5", '{"id": "x", "question": null}', '{"question": "no id"}', "[1, 2]"])
def test_a_bad_question_line_is_named_by_file_and_line(tmp_path, capsys, line):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "ok", "question": "Welche Grenzwerte?"}) + "\n" + line + "\n")
    out = tmp_path / "out.jsonl"
    code, err = _run(capsys, "eval", "--kb", str(DEMO_KB), "--db", str(tmp_path / "db"), "--questions",
                     str(questions), "--out", str(out))
    assert code == 2 and f"{questions}:2: expected a JSON object" in _one_line_error(err)
    assert not out.exists() and not (tmp_path / "db").exists()


def test_a_sessions_file_that_is_not_sqlite_is_refused_untouched(tmp_path, capsys):
    sessions = tmp_path / "notes.txt"
    sessions.write_text("my notes")
    code, err = _run(capsys, "research", "Welche Grenzwerte?", "--kb", str(DEMO_KB), "--no-hitl", "--sessions",
                     str(sessions))
    assert code == 2 and "is not a session database" in _one_line_error(err) and sessions.read_text() == "my notes"


def test_debug_shows_the_traceback(tmp_path, capsys):
    with pytest.raises(ValueError, match="knowledge-base folder not found"):
        cli_main(["--env-file", "none", "--debug", "search", "x", "--kb", str(tmp_path / "missing")])
