"""Every error a user can cause on the command line: one line that says what to do, exit code 2, no
traceback (unless --debug), and nothing created on disk."""

from __future__ import annotations

import json
import shutil

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


def _tree(root) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def test_an_empty_query_is_refused(capsys, demo_db):
    code, err = _run(capsys, "search", "  ", "--kb", str(DEMO_KB), "--db", str(demo_db))
    assert code == 2 and "empty query" in _one_line_error(err)


def test_an_unknown_document_is_named_with_the_ones_there_are(capsys, demo_db):
    code, err = _run(capsys, "search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(demo_db), "--doc", "nope.pdf")
    line = _one_line_error(err)
    assert code == 2 and "unknown document 'nope.pdf'" in line and ".pdf" in line.split("documents:")[1]


@pytest.mark.parametrize("line", ['{"id": 1, "text": null}', "5", '{"id": 2}', '{"id": 3, "text": "x", "doc": 7}'])
def test_a_bad_reference_input_line_is_refused_before_any_output(tmp_path, capsys, line):
    source = tmp_path / "texts.jsonl"
    source.write_text(json.dumps({"id": 0, "text": "Nach § 3 des Gesetzes gilt das."}) + "\n" + line + "\n")
    out = tmp_path / "refs.jsonl"
    code, err = _run(capsys, "refs", "--in", str(source), "--out", str(out))
    assert code == 2 and f"{source}:2: expected a JSON object" in _one_line_error(err)
    assert not out.exists() and _tree(tmp_path) == ["texts.jsonl"]


def test_an_unknown_collection_stops_research_before_anything_is_written(tmp_path, capsys):
    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB, kb)
    before = _tree(tmp_path)
    code, err = _run(capsys, "research", "Welche Grenzwerte?", "--kb", str(kb), "--no-hitl", "--collection", "Nope",
                     "--sessions", str(tmp_path / "s" / "sessions.sqlite"), "--out", str(tmp_path / "report"))
    assert code == 2 and "unknown collection 'Nope'; this knowledge base has: Recht, Technik" in _one_line_error(err)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("case", ["missing kb", "empty kb", "null question", "no questions"])
def test_batch_checks_its_knowledge_base_and_questions_before_any_kernel(tmp_path, capsys, case):
    kb = tmp_path / "kb"
    if case != "missing kb":
        kb.mkdir()
    if case in ("null question", "no questions"):
        (kb / "note.md").write_text("# Notiz\n\nEin Text, lang genug für einen Abschnitt.\n", encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    lines = {"null question": ['{"question": null}'], "no questions": ["# nothing yet", ""]}
    questions.write_text("\n".join(lines.get(case, ['{"question": "Was gilt?"}'])) + "\n", encoding="utf-8")
    before = _tree(tmp_path)
    code, err = _run(capsys, "batch", str(questions), "--kb", str(kb), "--out", str(tmp_path / "out"))
    expected = {"missing kb": "knowledge-base folder not found", "empty kb": "no usable documents in",
                "null question": ":1: expected a JSON object with 'question' (a text)",
                "no questions": "no questions"}[case]
    assert code == 2 and expected in _one_line_error(err)
    assert _tree(tmp_path) == before
