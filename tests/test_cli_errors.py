"""Every error a user can cause on the command line: one line that says what to do, exit code 2, no
traceback (unless --debug), and nothing created on disk."""

from __future__ import annotations

import json
import shutil

import pytest

from rabbithole_lab.cli.main import main as cli_main
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


# ---- issue 49 item 6 and 7: user errors found before anything is written, each naming its file ------------
def test_searching_an_empty_index_folder_is_refused_and_creates_nothing(tmp_path, capsys):
    db = tmp_path / "empty-db"
    db.mkdir()
    code, err = _run(capsys, "search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(db))
    assert code == 2 and "no index at" in _one_line_error(err) and _tree(db) == []


def test_the_doctor_refuses_a_missing_knowledge_base_and_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "MISSING"
    code, err = _run(capsys, "doctor", "--kb", str(missing))
    assert code == 2 and "knowledge-base folder not found" in _one_line_error(err) and not missing.exists()


def test_the_doctor_checks_an_index_folder_without_making_it(tmp_path, capsys):
    db = tmp_path / "later" / "db"
    cli_main(["--env-file", "none", "doctor", "--kb", str(DEMO_KB), "--db", str(db)])
    assert f"[ok]   index folder {db} can be made and is writable" in capsys.readouterr().out
    assert not (tmp_path / "later").exists()


@pytest.mark.parametrize("command", ["trail", "search", "research"])
def test_an_empty_or_document_sized_question_is_refused_at_once(tmp_path, capsys, demo_db, command):
    extra = ["--no-hitl", "--sessions", str(tmp_path / "s.sqlite")] if command == "research" else []
    code, err = _run(capsys, command, "  ", "--kb", str(DEMO_KB), "--db", str(demo_db), *extra)
    assert code == 2 and _one_line_error(err)
    code, err = _run(capsys, command, "Grenzwert " * 10_000, "--kb", str(DEMO_KB), "--db", str(demo_db), *extra)
    assert code == 2 and "100,000 characters" in _one_line_error(err)
    assert not (tmp_path / "s.sqlite").exists()


def test_refs_into_a_folder_is_refused_and_leaves_no_partial_file(tmp_path, capsys):
    source = tmp_path / "texts.jsonl"
    source.write_text(json.dumps({"id": 0, "text": "Nach § 3 des Gesetzes gilt das."}) + "\n")
    folder = tmp_path / "out"
    folder.mkdir()
    code, err = _run(capsys, "refs", "--in", str(source), "--out", str(folder))
    assert code == 2 and "is a folder" in _one_line_error(err)
    assert _tree(tmp_path) == ["out", "texts.jsonl"]


def test_research_out_that_is_a_file_is_refused_before_the_run(tmp_path, capsys):
    out = tmp_path / "report.txt"
    out.write_text("mine")
    code, err = _run(capsys, "research", "Welche Grenzwerte?", "--kb", str(DEMO_KB), "--no-hitl",
                     "--sessions", str(tmp_path / "s.sqlite"), "--out", str(out))
    assert code == 2 and "is a file" in _one_line_error(err) and out.read_text() == "mine"
    assert not (tmp_path / "s.sqlite").exists()  # no session was started


def test_ingesting_a_folder_without_documents_says_why(tmp_path, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "notes.xyz").write_text("not a document")
    code, err = _run(capsys, "ingest", str(kb))
    line = _one_line_error(err)
    assert code == 2 and "no documents to ingest" in line and "notes.xyz" in line
    assert _tree(kb) == ["notes.xyz"]


def test_an_empty_question_file_for_eval_is_refused(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n")
    code, err = _run(capsys, "eval", "--kb", str(DEMO_KB), "--db", str(tmp_path / "db"), "--questions",
                     str(questions), "--out", str(tmp_path / "out.jsonl"))
    assert code == 2 and "no questions" in _one_line_error(err) and _tree(tmp_path) == ["q.jsonl"]


@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
def test_eval_never_writes_over_its_questions(tmp_path, capsys, how):
    questions = tmp_path / "q.jsonl"
    content = json.dumps({"id": "a", "question": "Welche Grenzwerte?"}) + "\n"
    questions.write_text(content)
    out = {"same path": questions, "symlink": tmp_path / "out.jsonl", "hard link": tmp_path / "out.jsonl"}[how]
    if how == "symlink":
        out.symlink_to(questions)
    elif how == "hard link":
        out.hardlink_to(questions)
    code, err = _run(capsys, "eval", "--kb", str(DEMO_KB), "--db", str(tmp_path / "db"), "--questions",
                     str(questions), "--out", str(out))
    assert code == 2 and "is the input file" in _one_line_error(err) and questions.read_text() == content
    assert not (tmp_path / "db").exists()


def test_an_explicit_settings_file_that_is_missing_is_refused(tmp_path, capsys):
    code = cli_main(["--env-file", str(tmp_path / "MISSING.env"), "search", "x", "--kb", str(DEMO_KB)])
    err = capsys.readouterr().err
    assert code == 2 and "MISSING.env: no such file" in _one_line_error(err)


BINARY = b"\xff\xfe\x00\x81 not text \x9f"


@pytest.mark.parametrize("command", ["research --answers", "eval --questions", "batch", "refs --in"])
def test_a_binary_input_file_is_named_in_one_line(tmp_path, capsys, demo_db, command):
    data = tmp_path / "input.bin"
    data.write_bytes(BINARY)
    args = {
        "research --answers": ["research", "Welche Grenzwerte?", "--kb", str(DEMO_KB), "--db", str(demo_db),
                               "--answers", str(data), "--sessions", str(tmp_path / "s.sqlite")],
        "eval --questions": ["eval", "--kb", str(DEMO_KB), "--db", str(demo_db), "--questions", str(data),
                             "--out", str(tmp_path / "out.jsonl")],
        "batch": ["batch", str(data), "--kb", str(DEMO_KB), "--out", str(tmp_path / "out")],
        "refs --in": ["refs", "--in", str(data), "--out", str(tmp_path / "out.jsonl")],
    }[command]
    code, err = _run(capsys, *args)
    line = _one_line_error(err)
    assert code == 2 and str(data) in line and "not UTF-8" in line
    assert _tree(tmp_path) == ["input.bin"]


@pytest.mark.parametrize("damage", ["truncated", "overwritten"])
def test_a_damaged_store_is_one_line_that_says_how_to_rebuild_and_deletes_nothing(tmp_path, capsys, demo_db, damage):
    db = tmp_path / "db"
    shutil.copytree(demo_db, db)
    store = db / "chroma.sqlite3"
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 3] if damage == "truncated" else b"garbage" * 100)
    before = _tree(db)
    code, err = _run(capsys, "search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(db))
    line = _one_line_error(err)
    assert code == 2 and "is damaged" in line and "rabbithole ingest" in line and _tree(db) == before


def test_damaged_search_files_are_rebuilt_from_the_store(tmp_path, capsys, demo_db):
    db = tmp_path / "db"
    shutil.copytree(demo_db, db, symlinks=True)
    files = next((db / "bm25").glob("kb*_Recht"))  # the collection Recht of the demo knowledge base
    vectors = (files / "vectors.npy").resolve()  # the current generation (a relative link)
    assert vectors.is_relative_to(db.resolve())
    vectors.write_bytes(vectors.read_bytes()[:200])  # cut inside the array
    code = cli_main(["--env-file", "none", "search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(db),
                     "--collection", "Recht", "--mode", "dense"])
    printed = capsys.readouterr()
    assert code == 0 and "QStr" in printed.out, printed.err[-2000:]
    assert "search files of collection Recht are damaged" in printed.err
    assert (files / "vectors.npy").stat().st_size == 200  # a search reads: the index stays as it was
    assert cli_main(["--env-file", "none", "ingest", str(DEMO_KB), "--db", str(db), "--no-progress"]) == 0
    assert (files / "vectors.npy").stat().st_size > 200  # the ingest made a new generation current
