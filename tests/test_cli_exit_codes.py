"""Every exit code as the README's table says, one case per row, through the installed console script: a
skipped file is 1, empty and unreadable inputs are 2 everywhere, nothing is made for a knowledge base without
a usable file, a sessions file is never another program's database, and every message names its file or
variable. Each case was a reproduction that failed (issue 70)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from rabbithole_lab.kb.store.namespace import KB_ID_FILE

SCRIPT = Path(sys.executable).parent / "rabbithole"  # the installed console script
LAW = "§ 1 Leuchtfeuer\nDas Leuchtfeuer wird jede Nacht betrieben. Der Wärter prüft die Linse wöchentlich.\n"
CORRUPT_PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n" + bytes(range(256)) * 8


def _run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), "--env-file", "none", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL, env={**os.environ, "CI": "true", **(env or {})})


def _kb(root: Path, files: dict[str, bytes | str]) -> Path:
    folder = root / "kb" / "Recht__db_inserted"
    folder.mkdir(parents=True)
    for name, content in files.items():
        (folder / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root / "kb"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("codes")
    kb = _kb(root, {"Leuchtturm.md": LAW})
    assert _run("ingest", str(kb), "--db", str(root / "db"), "--no-progress", cwd=root).returncode == 0
    return kb, root / "db"


def test_0_an_ingest_that_read_every_file(tmp_path):
    kb = _kb(tmp_path, {"Leuchtturm.md": LAW, "Kopie.md": LAW})  # a copy is indexed once: nothing is missing
    done = _run("ingest", str(kb), "--db", str(tmp_path / "db"), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same content as" in done.stdout


def test_1_an_ingest_that_skipped_a_bad_file_names_it(tmp_path):
    kb = _kb(tmp_path, {"Leuchtturm.md": LAW, "kaputt.pdf": CORRUPT_PDF})
    done = _run("ingest", str(kb), "--db", str(tmp_path / "db"), "--no-progress", cwd=tmp_path)
    assert done.returncode == 1 and "kaputt.pdf" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "db" / "chroma.sqlite3").is_file()  # the good file is indexed


def test_1_a_knowledge_base_of_only_unusable_files_leaves_no_index_and_no_id(tmp_path):
    kb = _kb(tmp_path, {"kaputt.pdf": CORRUPT_PDF})
    done = _run("ingest", str(kb), "--db", str(tmp_path / "db"), "--no-progress", cwd=tmp_path)
    assert done.returncode == 1 and "kaputt.pdf" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "db").exists() and not (kb / KB_ID_FILE).exists()
    done = _run("research", "Wie oft prüft der Wärter die Linse?", "--kb", str(kb), "--db", str(tmp_path / "db"),
                "--no-hitl", "--out", str(tmp_path / "r"), "--sessions", str(tmp_path / "s.sqlite"), cwd=tmp_path)
    assert done.returncode == 2 and "usable" in done.stderr.lower(), done.stderr
    assert not (tmp_path / "db").exists() and not (kb / KB_ID_FILE).exists()


@pytest.mark.parametrize("command", ["refs", "eval", "batch", "research"])
def test_2_an_empty_input_file_everywhere(tmp_path, indexed, command):
    kb, db = indexed
    empty = tmp_path / "leer.jsonl"
    empty.write_text("\n", encoding="utf-8")
    args = {"refs": ["refs", "--in", str(empty), "--out", str(tmp_path / "out.jsonl")],
            "eval": ["eval", "--kb", str(kb), "--db", str(db), "--questions", str(empty), "--out",
                     str(tmp_path / "out.jsonl")],
            "batch": ["batch", str(empty), "--kb", str(kb), "--out", str(tmp_path / "batch")],
            "research": ["research", "Wie oft prüft der Wärter die Linse?", "--kb", str(kb), "--db", str(db),
                         "--answers", str(empty), "--out", str(tmp_path / "r")]}[command]
    done = _run(*args, cwd=tmp_path)
    assert done.returncode == 2 and str(empty) in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("command", ["refs --in", "eval --questions", "research --answers"])
def test_2_a_device_is_not_read_as_an_input_file(tmp_path, indexed, command):
    """`refs --in /dev/zero` grew until memory ran out, then a MemoryError traceback."""
    kb, db = indexed
    args = {"refs --in": ["refs", "--in", "/dev/zero", "--out", str(tmp_path / "out.jsonl")],
            "eval --questions": ["eval", "--kb", str(kb), "--db", str(db), "--questions", "/dev/zero", "--out",
                                 str(tmp_path / "out.jsonl")],
            "research --answers": ["research", "Wie oft prüft der Wärter die Linse?", "--kb", str(kb), "--db",
                                   str(db), "--answers", "/dev/urandom", "--out", str(tmp_path / "r")]}[command]
    done = _run(*args, cwd=tmp_path)
    assert done.returncode == 2 and "not a regular file" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_0_an_input_file_with_a_byte_order_mark_is_read(tmp_path):
    texts = tmp_path / "texte.jsonl"
    texts.write_text("\ufeff" + json.dumps({"id": "a", "text": "Nach § 3 Absatz 2 gilt dies."}) + "\n",
                     encoding="utf-8")
    done = _run("refs", "--in", str(texts), "--out", str(tmp_path / "out.jsonl"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["id"] == "a" and row["refs"][0]["sections"] == ["3"]


def test_2_a_sessions_file_that_is_another_programs_database_is_refused_untouched(tmp_path, indexed):
    """`--sessions kb/database/chroma.sqlite3` wrote the checkpoint tables into the index, rc 0."""
    kb, db = indexed
    store = tmp_path / "chroma.sqlite3"
    shutil.copy(db / "chroma.sqlite3", store)
    other = tmp_path / "andere.sqlite"
    with sqlite3.connect(other) as database:
        database.execute("CREATE TABLE kunden (name TEXT)")
    for path in (store, other):
        before = path.read_bytes()
        done = _run("research", "Wie oft prüft der Wärter die Linse?", "--kb", str(kb), "--db", str(db),
                    "--no-hitl", "--sessions", str(path), "--out", str(tmp_path / "r"), cwd=tmp_path)
        assert done.returncode == 2 and "another program's database" in done.stderr, done.stderr
        assert path.read_bytes() == before and not (tmp_path / "r").exists()


def test_2_outputs_that_would_destroy_something_name_it(tmp_path, indexed):
    kb, db = indexed
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q", "question": "Wie oft prüft der Wärter die Linse?"}) + "\n")
    document = kb / "Recht__db_inserted" / "Leuchtturm.md"
    done = _run("eval", "--kb", str(kb), "--db", str(db), "--questions", str(questions), "--out", str(document),
                cwd=tmp_path)
    assert done.returncode == 2 and "inside the knowledge base" in done.stderr, done.stderr
    assert document.read_text(encoding="utf-8") == LAW
    blocked = tmp_path / "ein-file"
    blocked.write_text("x")
    done = _run("batch", str(questions), "--kb", str(kb), "--out", str(blocked), cwd=tmp_path)
    assert done.returncode == 2 and str(blocked) in done.stderr and "Errno" not in done.stderr, done.stderr


def test_2_an_invalid_setting_names_its_variable(tmp_path, indexed):
    kb, db = indexed
    done = _run("search", "Linse", "--kb", str(kb), "--db", str(db), cwd=tmp_path,
                env={"CHUNK_SIZE_BY_COLLECTION": "{kaputt"})
    assert done.returncode == 2 and "CHUNK_SIZE_BY_COLLECTION" in done.stderr, done.stderr


def test_a_copied_knowledge_base_folder_is_a_knowledge_base_of_its_own(tmp_path):
    """A copy shared its id with the original: deleting a file in the copy removed it from the original's
    search. The id is the store's record of the folder now: a copy is another knowledge base."""
    kb = _kb(tmp_path, {"Leuchtturm.md": LAW, "Nebel.md": "§ 1 Nebelhorn\nDas Nebelhorn ertönt bei Nebel.\n"})
    store = tmp_path / "store"
    assert _run("ingest", str(kb), "--db", str(store), "--no-progress", cwd=tmp_path).returncode == 0
    copy = tmp_path / "kopie"
    shutil.copytree(kb, copy)
    (copy / "Recht__db_inserted" / "Nebel.md").unlink()
    assert _run("ingest", str(copy), "--db", str(store), "--no-progress", cwd=tmp_path).returncode == 0
    found = _run("search", "Nebelhorn", "--kb", str(kb), "--db", str(store), "--json", cwd=tmp_path)
    assert "Nebel.md" in {hit["doc"] for hit in json.loads(found.stdout)}  # the original's search is whole
    in_copy = _run("search", "Nebelhorn", "--kb", str(copy), "--db", str(store), "--json", cwd=tmp_path)
    assert "Nebel.md" not in {hit["doc"] for hit in json.loads(in_copy.stdout)}
    assert not (kb / KB_ID_FILE).exists() and not (copy / KB_ID_FILE).exists()


def test_2_a_copy_of_a_folder_with_an_earlier_version_s_id_file_is_told_apart_before_it_changes_the_original(
        tmp_path):
    """An earlier version recorded the id in the folder (`.rabbithole-kb-id`); a copy carries that file."""
    kb = _kb(tmp_path, {"Leuchtturm.md": LAW, "Nebel.md": "§ 1 Nebelhorn\nDas Nebelhorn ertönt bei Nebel.\n"})
    (kb / KB_ID_FILE).write_text("0123456789ab\n", encoding="utf-8")
    store = tmp_path / "store"
    assert _run("ingest", str(kb), "--db", str(store), "--no-progress", cwd=tmp_path).returncode == 0
    copy = tmp_path / "kopie"
    shutil.copytree(kb, copy)
    (copy / "Recht__db_inserted" / "Nebel.md").unlink()
    done = _run("ingest", str(copy), "--db", str(store), "--no-progress", cwd=tmp_path)
    assert done.returncode == 2 and "copied folder" in done.stderr and str(kb) in done.stderr, done.stderr
    found = _run("search", "Nebelhorn", "--kb", str(kb), "--db", str(store), "--json", cwd=tmp_path)
    assert "Nebel.md" in {hit["doc"] for hit in json.loads(found.stdout)}  # the original's search is whole
    warned = _run("search", "Nebelhorn", "--kb", str(copy), "--db", str(store), cwd=tmp_path)
    assert "copied folder" in warned.stderr
    (copy / KB_ID_FILE).unlink()  # what the message says to do: the copy gets its own id and index
    assert _run("ingest", str(copy), "--db", str(store), "--no-progress", cwd=tmp_path).returncode == 0


def test_a_file_name_with_a_bidi_override_is_shown_as_it_is(tmp_path):
    """`evil\u202efdp.md` was shown as "evilmd.pdf"."""
    kb = _kb(tmp_path, {"evil\u202efdp.md": LAW})
    done = _run("ingest", str(kb), "--db", str(tmp_path / "db"), cwd=tmp_path)
    shown = done.stdout + done.stderr
    assert "\u202e" not in shown
    found = _run("search", "Linse", "--kb", str(kb), "--db", str(tmp_path / "db"), cwd=tmp_path)
    assert "evil<U+202E>fdp.md" in found.stdout and "\u202e" not in found.stdout


def test_2_a_collection_another_client_deleted_is_named_with_the_command_that_restores_it(tmp_path):
    """It gave "No results." rc 0 and "this knowledge base has: none"."""
    import chromadb

    kb = _kb(tmp_path, {"Leuchtturm.md": LAW})
    store = tmp_path / "store"
    assert _run("ingest", str(kb), "--db", str(store), "--no-progress", cwd=tmp_path).returncode == 0
    other = chromadb.PersistentClient(path=str(store))  # another client of the same store
    for collection in other.list_collections():
        other.delete_collection(collection.name)
    for args in (["search", "Linse"], ["search", "Linse", "--collection", "Recht"]):
        done = _run(*args, "--kb", str(kb), "--db", str(store), cwd=tmp_path)
        assert done.returncode == 2 and "Recht" in done.stderr and "rabbithole ingest" in done.stderr, done.stderr
        assert "No results" not in done.stdout
