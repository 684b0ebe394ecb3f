"""A read leaves the index as it was: every reading command of the installed console script (search,
trail, eval, doctor, research of a folder indexed already), also on its error exits, and an index on a
read-only mount is searched and researched; an ingest there says the index is read-only, never damaged.

Chroma rewrote its HNSW files (`length.bin`, `data_level0.bin`) and `chroma.sqlite3` on every open, so a
colleague's index or a CI cache changed under each search and a read-only mount was called damaged, with
the advice to move it away."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import DEMO_KB

SCRIPT = Path(sys.executable).parent / "rabbithole"  # the installed console script
QUESTION = "Welcher Grenzwert gilt für die effektive Dosis beruflich exponierter Personen?"


def _checksums(folder: Path) -> dict[str, str]:
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


def _run(*args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = {**os.environ, "CI": "true", "NO_COLOR": "1"}
    return subprocess.run([*prefix, str(SCRIPT), "--env-file", "none", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path]:
    """The demo knowledge base in a folder of its own, ingested by the console script."""
    root = tmp_path_factory.mktemp("reads")
    kb = root / "kb"
    shutil.copytree(DEMO_KB, kb, ignore=shutil.ignore_patterns("database", "reports"))
    done = _run("ingest", str(kb), "--db", str(root / "db"), "--no-progress", cwd=root)
    assert done.returncode == 0, done.stderr
    return kb, root / "db"


def test_every_read_command_leaves_the_index_byte_for_byte_as_it_was(indexed, tmp_path):
    kb, db = indexed
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "q1", "question": QUESTION, "entry": {"doc": "QStrV.pdf",
                                                                               "section": "§ 5"}}) + "\n")
    commands = {
        "search": (["search", QUESTION, "--kb", str(kb), "--db", str(db)], 0),
        "search, unknown collection": (["search", QUESTION, "--kb", str(kb), "--db", str(db), "--collection",
                                        "Nope"], 2),
        "search --db alone": (["search", QUESTION, "--db", str(db)], 0),
        "trail": (["trail", QUESTION, "--kb", str(kb), "--db", str(db), "--json"], 0),
        "eval": (["eval", "--kb", str(kb), "--db", str(db), "--questions", str(questions), "--out",
                  str(tmp_path / "out.jsonl"), "--no-progress"], 0),
        "doctor": (["doctor", "--kb", str(kb), "--db", str(db)], None),  # Ollama is absent: its own rc
        "research": (["research", QUESTION, "--kb", str(kb), "--db", str(db), "--no-hitl", "--no-progress",
                      "--out", str(tmp_path / "report"), "--sessions", str(tmp_path / "sessions.sqlite")], 0),
    }
    before = _checksums(db)
    for name, (args, code) in commands.items():
        done = _run(*args, cwd=tmp_path)
        assert code is None or done.returncode == code, f"{name}: {done.stderr[-2000:]}"
        assert _checksums(db) == before, f"{name} changed the index"
    assert (tmp_path / "report" / "report.md").is_file()


def _read_only_mount() -> tuple[str, ...] | None:
    """A prefix that runs a command with the index folder mounted read-only: a private mount namespace
    (root; permission bits do not stop root), or nothing needed (anyone else: the bits do)."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        return None
    return ("unshare", "-m", "sh", "-c", 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && '
            'exec "$@"')


@contextmanager
def _read_only(folder: Path):
    """The prefix that runs a command with `folder` read-only (`_read_only_mount`), or the folder's write bits
    taken away for the while; skipped where neither can be had."""
    prefix = _read_only_mount()
    if prefix is None:
        pytest.skip("needs `unshare -m` (a private mount namespace) to mount a folder read-only as root")
    if not prefix:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode & ~0o222)
    try:
        yield (*prefix, str(folder)) if prefix else ()
    finally:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(path.stat().st_mode | 0o200)


def test_an_index_on_a_read_only_mount_is_searched_and_researched_and_ingest_says_read_only(indexed, tmp_path):
    kb, db = indexed
    copy = tmp_path / "db"
    shutil.copytree(db, copy)
    with _read_only(copy) as prefix:
        before = _checksums(copy)
        found = _run("search", QUESTION, "--kb", str(kb), "--db", str(copy), cwd=tmp_path, prefix=prefix)
        assert found.returncode == 0 and "QStr" in found.stdout, found.stderr
        researched = _run("research", QUESTION, "--kb", str(kb), "--db", str(copy), "--no-hitl", "--no-progress",
                          "--out", str(tmp_path / "report"), "--sessions", str(tmp_path / "s.sqlite"),
                          cwd=tmp_path, prefix=prefix)
        assert researched.returncode == 0, researched.stderr[-2000:]
        assert (tmp_path / "report" / "report.md").is_file()
        (kb / "Recht__db_inserted" / "Neu.md").write_text("§ 1 Neu\nEin neuer Text.\n", encoding="utf-8")
        try:
            refused = _run("ingest", str(kb), "--db", str(copy), "--no-progress", cwd=tmp_path, prefix=prefix)
        finally:
            (kb / "Recht__db_inserted" / "Neu.md").unlink()
        assert refused.returncode != 0 and "read-only" in refused.stderr, refused.stderr
        assert "damaged" not in refused.stderr and "move that folder away" not in refused.stderr
        assert _checksums(copy) == before


def test_a_read_only_knowledge_base_folder_with_its_index_inside_is_searched_without_db(indexed, tmp_path):
    """Without --db the index in `<kb>/database` of a read-only folder was not looked for: "no index … run
    rabbithole ingest kb first"."""
    kb, db = indexed
    shared = tmp_path / "shared-kb"
    shutil.copytree(kb, shared)
    shutil.copytree(db, shared / "database")
    with _read_only(shared) as prefix:
        before = _checksums(shared)
        found = _run("search", QUESTION, "--kb", str(shared), cwd=tmp_path, prefix=prefix)
        assert found.returncode == 0 and "QStr" in found.stdout, found.stderr
        assert _checksums(shared) == before


def test_the_copy_of_a_reader_that_was_killed_is_removed_by_the_next_reader(indexed):
    """kill -9 runs no clean-up: its copy would stay in the temporary folder for good."""
    import tempfile

    from rabbithole_lab.kb.store.local_store import ReadCopy

    _, db = indexed
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    orphan = Path(tempfile.gettempdir()) / f"rabbithole-read-{gone.pid}-killed"
    orphan.mkdir(exist_ok=True)
    copy = ReadCopy(db)
    try:
        assert not orphan.exists() and (copy.path / "chroma.sqlite3").is_file()
    finally:
        copy.close()
    assert not copy.path.exists()
