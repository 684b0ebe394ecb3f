"""Nothing lost, nothing twice: text encodings, duplicate files, Markdown with a title, and real processes
killed (kill -9, Ctrl-C) in the middle of an ingest or a research run."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rabbithole_lab.kb.ingest.ingest import format_report, ingest
from rabbithole_lab.kb.ingest.ingest_lock import ingest_lock
from rabbithole_lab.kb.kb_factory import open_index
from tests.conftest import DEMO_KB, REPO

GERMAN = "§ 1 Zweck\nDieses „Gesetz“ regelt die Gebühr von 5 € für die Prüfung der Geräte.\n"


def _chunks(index, collection: str) -> dict[str, tuple[str, str]]:
    return {c.id: (c.doc, c.section) for c in index.get_chunks(collection)}


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "cp1252", "utf-8-sig"])
def test_a_text_file_is_read_in_its_own_encoding(tmp_path, settings, encoding):
    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    (kb / "Gesetz.txt").write_bytes(GERMAN.encode(encoding))
    index = open_index(settings, tmp_path / "kb", tmp_path / "db")
    report = ingest(tmp_path / "kb", index, settings.kb, show_progress=False)
    assert report.files_ingested == 1 and not report.skipped, format_report(report)
    [chunk] = index.get_chunks("Recht")
    assert "Dieses „Gesetz“ regelt die Gebühr von 5 €" in chunk.text and chunk.section == "§ 1"


def test_utf8_with_stray_bytes_stays_utf8_with_the_bad_bytes_replaced_and_said(tmp_path, settings, caplog):
    """Two stray bytes once made the whole file cp1250 ("GrĂĽĂźe"), losing its "§ 1" label."""
    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    data = GERMAN.encode("utf-8")
    cut = data.index(b"regelt")
    (kb / "Gesetz.txt").write_bytes(data[:cut] + b"\xff\xfe" + data[cut:])
    index = open_index(settings, tmp_path / "kb", tmp_path / "db")
    with caplog.at_level("WARNING"):
        report = ingest(tmp_path / "kb", index, settings.kb, show_progress=False)
    assert report.files_ingested == 1
    [chunk] = index.get_chunks("Recht")
    assert chunk.section == "§ 1" and "Gebühr von 5 €" in chunk.text and "\ufffd" in chunk.text
    assert any("undecodable" in record.getMessage() for record in caplog.records)


def test_identical_files_are_indexed_once_and_each_skip_is_reported_once(tmp_path, settings, caplog):
    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    (kb / "A.txt").write_text(GERMAN, encoding="utf-8")
    (kb / "B.txt").write_text(GERMAN, encoding="utf-8")
    (kb / "C.docx").write_text("not supported", encoding="utf-8")
    index = open_index(settings, tmp_path / "kb", tmp_path / "db")
    with caplog.at_level("INFO"):
        report = ingest(tmp_path / "kb", index, settings.kb, show_progress=False)
    assert {c[0] for c in _chunks(index, "Recht").values()} == {"A.txt"}
    reasons = {Path(issue.path).name: issue.reason for issue in report.skipped}
    assert reasons["B.txt"] == "same content as Recht/A.txt, indexed once" and "unsupported" in reasons["C.docx"]
    text = format_report(report)
    assert text.count("B.txt") == 1 and text.count("C.docx") == 1
    assert not any("B.txt" in record.getMessage() for record in caplog.records)  # the report says it, once


def test_only_the_knowledge_bases_own_regular_files_are_read(tmp_path, settings):
    """A symlink out of the folder (/etc/os-release was indexed), to a device (/dev/zero) or to a FIFO (both
    hung the ingest forever), and a broken one: each skipped with its reason; a symlink inside is read."""
    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    (kb / "Gesetz.txt").write_text(GERMAN, encoding="utf-8")
    outside = tmp_path / "private.txt"
    outside.write_text("§ 1 Geheim\nEin Text außerhalb der Wissensbasis.\n", encoding="utf-8")
    (kb / "Fremd.txt").symlink_to(outside)
    (kb / "Null.txt").symlink_to("/dev/zero")
    fifo = tmp_path / "kb" / "pipe.txt"
    os.mkfifo(fifo)
    (kb / "Rohr.txt").symlink_to(fifo)
    os.mkfifo(kb / "Direkt.txt")
    (kb / "Kaputt.txt").symlink_to(tmp_path / "gone.txt")
    (kb / "Verweis.txt").symlink_to(kb / "Gesetz.txt")  # inside: the same text, indexed once
    index = open_index(settings, tmp_path / "kb", tmp_path / "db")
    report = ingest(tmp_path / "kb", index, settings.kb, show_progress=False)  # returns: nothing hangs
    reasons = {Path(issue.path).name: issue.reason for issue in report.skipped}
    assert "outside the knowledge base" in reasons["Fremd.txt"]
    assert all("not a regular file" in reasons[name] for name in ("Null.txt", "Rohr.txt", "Direkt.txt"))
    assert "broken symlink" in reasons["Kaputt.txt"]
    texts = " ".join(chunk.text for chunk in index.get_chunks("Recht"))
    assert "Gebühr von 5 €" in texts and "außerhalb" not in texts


def test_a_collection_folder_that_leads_out_of_the_knowledge_base_is_skipped_with_its_reason(tmp_path, settings):
    """`ln -s ../outcol kb/Y__db_inserted` made a file outside the knowledge base searchable and citable; a
    collection folder linked inside the knowledge base is read."""
    kb = tmp_path / "kb"
    (kb / "Recht__db_inserted").mkdir(parents=True)
    (kb / "Recht__db_inserted" / "Gesetz.txt").write_text(GERMAN, encoding="utf-8")
    outside = tmp_path / "outcol"
    outside.mkdir()
    (outside / "aussen.md").write_text("§ 1 Fremd\nEin Text außerhalb der Wissensbasis.\n", encoding="utf-8")
    (kb / "Y__db_inserted").symlink_to(outside)
    (kb / "Kopie__db_inserted").symlink_to(kb / "Recht__db_inserted")
    index = open_index(settings, kb, tmp_path / "db")
    report = ingest(kb, index, settings.kb, show_progress=False)
    reasons = {Path(issue.path).name: issue.reason for issue in report.skipped}
    assert "outside the knowledge base" in reasons["Y__db_inserted"]
    assert "Y" not in index.collections() and "Kopie" in index.collections()
    texts = " ".join(chunk.text for collection in index.collections() for chunk in index.get_chunks(collection))
    assert "Gebühr von 5 €" in texts and "außerhalb" not in texts


def test_the_same_file_in_two_collections_is_in_both(tmp_path, settings):
    """It was skipped as a copy in the second, which then did not exist ("unknown collection")."""
    for collection in ("Recht", "Archiv"):
        folder = tmp_path / "kb" / f"{collection}__db_inserted"
        folder.mkdir(parents=True)
        (folder / "Gesetz.txt").write_text(GERMAN, encoding="utf-8")
    index = open_index(settings, tmp_path / "kb", tmp_path / "db")
    report = ingest(tmp_path / "kb", index, settings.kb, show_progress=False)
    assert report.files_ingested == 2 and not report.skipped, format_report(report)
    assert sorted(index.collections()) == ["Archiv", "Recht"]
    assert index.documents("Archiv") == index.documents("Recht") == ["Gesetz.txt"]


def test_a_markdown_file_with_a_title_splits_at_its_section_lines(tmp_path, settings):
    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    (kb / "Beispielgesetz.md").write_text("# Beispielgesetz\n\n§ 1 Zweck\n\nDieses Gesetz regelt Beispiele.\n\n"
                                          "§ 2 Begriffe\n\nBeispiele sind Fälle, die etwas zeigen.\n", encoding="utf-8")
    index = open_index(settings, tmp_path / "kb", tmp_path / "db")
    ingest(tmp_path / "kb", index, settings.kb, show_progress=False)
    assert sorted(section for _, section in _chunks(index, "Recht").values()) == ["§ 1", "§ 2"]


def _big_kb(root: Path) -> Path:
    """A KB whose one document needs several embedding batches (small chunks)."""
    kb = root / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    lines = []
    for number in range(1, 121):
        lines.append(f"§ {number} Vorschrift {number}")
        lines += [f"({paragraph}) Der Betreiber hat für die Anlage {number} im Absatz {paragraph} die Pflicht "
                  f"Nummer {number * 10 + paragraph} zu erfüllen und darüber einen Nachweis zu führen." for paragraph
                  in range(1, 4)]
    (kb / "Grossgesetz.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (kb / "Kleingesetz.txt").write_text(GERMAN, encoding="utf-8")
    return root / "kb"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "CHUNK_SIZE": "200", "CHUNK_OVERLAP": "0", "LLM_PROVIDER": "extractive"}


def _interrupt_when(command: list[str], pattern: str, signal_number: int, timeout_s: float = 600) -> str:
    """Run `command`, send `signal_number` once its stderr matches `pattern`; returns what it wrote. The run
    embeds every text (no vector cache), so that it is still at work when the signal comes."""
    process = subprocess.Popen(command, cwd=REPO, env={**_env(), "EMBEDDING_VECTOR_CACHE": "off"},
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    seen = ""
    deadline = time.monotonic() + timeout_s
    os.set_blocking(process.stderr.fileno(), False)
    while time.monotonic() < deadline and process.poll() is None:
        chunk = process.stderr.read(4096)
        if chunk:
            seen += chunk.decode(errors="replace")
            if re.search(pattern, seen):
                process.send_signal(signal_number)
                break
        else:
            time.sleep(0.05)
    process.wait(timeout=120)
    assert re.search(pattern, seen), f"never saw {pattern!r}:\n{seen[-2000:]}"
    return seen


def _state(db: Path) -> tuple[dict, list]:
    settings_env = {"CHUNK_SIZE": "200", "CHUNK_OVERLAP": "0"}
    from rabbithole_lab.settings import load_settings

    settings = load_settings(env_file=None, kb={"max_chunk_chars": int(settings_env["CHUNK_SIZE"]),
                                                "chunk_overlap_chars": 0})
    index = open_index(settings, None, db)
    registry = json.loads(index.auto_registry_path.read_text(encoding="utf-8"))
    return _chunks(index, "Recht"), registry


@pytest.fixture(scope="module")
def big_kb_clean(tmp_path_factory) -> tuple[Path, tuple[dict, list]]:
    """The big KB and the state an ingest never stopped leaves (one reference for every interruption)."""
    root = tmp_path_factory.mktemp("big-kb")
    kb, clean = _big_kb(root), root / "clean"
    subprocess.run(_cli("ingest", str(kb), "--db", str(clean), "--no-progress"), cwd=REPO, env=_env(), check=True,
                   capture_output=True)
    return kb, _state(clean)


@pytest.mark.parametrize("signal_number", [signal.SIGKILL, signal.SIGINT])
def test_an_ingest_killed_inside_a_document_is_completed_by_the_next_one(tmp_path, big_kb_clean, signal_number):
    kb, clean = big_kb_clean
    broken = tmp_path / "broken"
    # one embedding batch of the big document is in, the rest is not
    _interrupt_when(_cli("ingest", str(kb), "--db", str(broken)), r"Chunks: (2[5-9]\d|[3-9]\d\d)/\d+",
                    signal_number)
    again = subprocess.run(_cli("ingest", str(kb), "--db", str(broken), "--no-progress"), cwd=REPO, env=_env(),
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _state(broken) == clean  # the same chunks, sections and registry as an ingest never stopped


def test_a_lost_auto_registry_is_rebuilt_by_the_next_ingest(tmp_path, settings):
    db = tmp_path / "db"
    index = open_index(settings, DEMO_KB, db)
    ingest(DEMO_KB, index, settings.kb, show_progress=False)
    before = json.loads(index.auto_registry_path.read_text(encoding="utf-8"))
    index.auto_registry_path.write_text("[]", encoding="utf-8")
    report = ingest(DEMO_KB, index, settings.kb, show_progress=False)
    assert report.files_unchanged == 4 and report.chunks_added == 0  # nothing embedded again
    assert json.loads(index.auto_registry_path.read_text(encoding="utf-8")) == before


def test_a_second_ingest_on_the_same_index_fails_fast_while_a_search_still_answers(tmp_path, demo_db):
    with ingest_lock(demo_db):
        busy = subprocess.run(_cli("ingest", str(DEMO_KB), "--db", str(demo_db), "--no-progress"), cwd=REPO,
                              env=_env(), capture_output=True, text=True, timeout=300)
        search = subprocess.run(_cli("search", "Grenzwert", "--kb", str(DEMO_KB), "--db", str(demo_db), "--k", "2"),
                                cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
    assert busy.returncode == 2 and "another ingest is writing to" in busy.stderr and "Traceback" not in busy.stderr
    assert search.returncode == 0 and "1. " in search.stdout


def test_a_research_run_killed_mid_task_is_finished_by_resume(tmp_path, demo_db):
    # a copy: the killed run and its resume (with this module's small chunk size) may re-chunk the KB into
    # the index they are given, which the session-wide demo index must not see
    db = tmp_path / "db"
    shutil.copytree(demo_db, db)
    sessions, out = tmp_path / "sessions.sqlite", tmp_path / "report"
    question = "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?"
    _interrupt_when(_cli("research", question, "--kb", str(DEMO_KB), "--db", str(db), "--no-hitl",
                         "--sessions", str(sessions), "--out", str(out), "--no-progress"),
                    r"Aufgabe 1/\d+", signal.SIGKILL)
    assert not (out / "report.json").exists()
    from rabbithole_lab.agent.session import list_sessions

    [saved] = list_sessions(sessions)
    resumed = subprocess.run(_cli("research", "--resume", saved["thread_id"], "--sessions", str(sessions), "--out",
                                  str(out), "--no-progress"), cwd=REPO, env=_env(), capture_output=True, text=True,
                             timeout=900)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert "20 Millisievert" in report["report"]["answer"]


def test_whole_collection_reads_go_page_by_page(tmp_path, settings, monkeypatch):
    """SQLite refuses a statement with too many variables, so a large collection is read in pages; a page
    size far below the collection's size must read exactly what one page does."""
    from rabbithole_lab.kb.store import chroma_records

    db = tmp_path / "db"
    index = open_index(settings, DEMO_KB, db)
    ingest(DEMO_KB, index, settings.kb, show_progress=False)
    whole = {collection: (sorted(index.rebuild_bm25(collection).ids), index.documents(collection),
                          index.document_hashes(collection)) for collection in index.collections()}
    monkeypatch.setattr(chroma_records, "GET_PAGE_SIZE", 3)
    paged_index = open_index(settings, DEMO_KB, db)
    for collection, (ids, documents, hashes) in whole.items():
        assert len(ids) > 3  # more than one page
        assert sorted(paged_index.rebuild_bm25(collection).ids) == ids
        assert paged_index.documents(collection) == documents and paged_index.document_hashes(collection) == hashes
    report = ingest(DEMO_KB, paged_index, settings.kb, show_progress=False)
    assert report.files_unchanged == 4 and report.chunks_added == 0


def test_a_run_that_only_updates_the_index_waits_for_another_ingest(tmp_path, settings, demo_db, caplog):
    """Batch workers bring one index up to date before they start: the second waits for the first
    instead of failing, and says once that it waits (the `ingest` command itself still fails fast, see above)."""
    import threading

    from rabbithole_lab.kb.ingest.ingest_lock import IngestBusyError

    index = open_index(settings, DEMO_KB, demo_db)
    held, release = threading.Event(), threading.Event()

    def other_ingest():
        with ingest_lock(demo_db):
            held.set()
            release.wait(30)

    other = threading.Thread(target=other_ingest)
    other.start()
    held.wait(30)
    with pytest.raises(IngestBusyError):
        ingest(DEMO_KB, index, settings.kb, show_progress=False)
    threading.Timer(1.0, release.set).start()
    with caplog.at_level("WARNING", logger="rabbithole_lab.kb.ingest.ingest_lock"):
        report = ingest(DEMO_KB, index, settings.kb, show_progress=False, lock_wait_s=60)
    other.join(30)
    assert report.files_unchanged == 4 and report.chunks_added == 0
    waits = [record for record in caplog.records if record.name == "rabbithole_lab.kb.ingest.ingest_lock"]
    assert len(waits) == 1 and str(demo_db) in waits[0].getMessage()


def test_progress_without_a_terminal_is_plain_lines_and_library_notes_stay_quiet(tmp_path):
    done = subprocess.run(_cli("ingest", str(DEMO_KB), "--db", str(tmp_path / "db")), cwd=REPO, env=_env(),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "\r" not in done.stderr and "\x1b[" not in done.stderr  # no bar drawn into a pipe
    assert re.search(r"^INFO rabbithole_lab.support.progress_bars: Files: 4/4 file", done.stderr, re.MULTILINE)
    assert "bm25s" not in done.stderr  # its debug notes need --verbose
    assert "Loaded embedding model" not in done.stderr  # a debug line: nothing for the researcher to act on


def test_a_plain_progress_line_says_the_pace_and_the_time_left(caplog, monkeypatch):
    from rabbithole_lab.support import progress_bars as progress_module

    now = {"s": 100.0}
    monkeypatch.setattr(progress_module.time, "monotonic", lambda: now["s"])
    with caplog.at_level("INFO", logger="rabbithole_lab.support.progress_bars"):
        bar = progress_module.PlainProgress(desc="Chunks", total=1000, unit="chunk")
        now["s"] += 10
        bar.update(250)  # 10 s after the start: 25 a second, 750 to go
    [line] = [record.getMessage() for record in caplog.records]
    assert line == "Chunks: 250/1000 chunk, 25.0 chunk/s, about 30 s left"


def test_a_long_lived_search_sees_what_another_process_removed(tmp_path, settings):
    """The workbench kernel kept returning a section whose file another process's ingest had removed."""
    from rabbithole_lab.kb.kb_factory import open_knowledge_base

    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB / "Recht__db_inserted", kb / "Recht__db_inserted")
    (kb / "Recht__db_inserted" / "Sternwarte.txt").write_text(
        "§ 1 Sternwarte\nIm Observatorium gilt für Teleskopwarte ein Grenzwert von 7 Millisievert.\n", encoding="utf-8")
    ingest(kb, open_index(settings, kb, tmp_path / "db"), settings.kb, show_progress=False)
    kernel = open_knowledge_base(settings, kb, tmp_path / "db")  # lives on, like a notebook kernel
    for mode in ("bm25", "dense", "hybrid"):
        assert "Sternwarte.txt" in {hit.doc for hit in kernel.search("Teleskopwarte Observatorium", k=5, mode=mode)}
    (kb / "Recht__db_inserted" / "Sternwarte.txt").unlink()
    done = subprocess.run([sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "ingest", str(kb),
                           "--db", str(tmp_path / "db"), "--no-progress"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for mode in ("bm25", "dense", "hybrid"):
        assert "Sternwarte.txt" not in {hit.doc for hit in kernel.search("Teleskopwarte Observatorium", k=5, mode=mode)}


def test_a_pdf_whose_text_file_fails_too_is_one_line_that_says_both(tmp_path, settings):
    """"empty.pdf … its text empty.md is ingested instead" was followed by "skipped empty.md"."""
    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    (kb / "Gesetz.txt").write_text(GERMAN, encoding="utf-8")
    (kb / "leer.pdf").write_bytes(b"")
    (kb / "leer.md").write_text("", encoding="utf-8")
    report = ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb,
                    show_progress=False)
    reasons = {Path(issue.path).name: issue.reason for issue in report.skipped}
    assert set(reasons) == {"leer.pdf"}, reasons
    assert "leer.md cannot be used either" in reasons["leer.pdf"] and "ingested instead" not in reasons["leer.pdf"]


def test_every_text_beside_a_pdf_is_named(tmp_path, settings):
    """With X.pdf, X.md and X.txt the report named only the .txt; the .md went unsaid."""
    import pymupdf

    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    document = pymupdf.open()
    document.new_page().insert_text((72, 72), "§ 1 Zweck\nDieses Gesetz regelt die Prüfung der Geräte.")
    document.save(kb / "Gesetz.pdf")
    (kb / "Gesetz.md").write_text(GERMAN, encoding="utf-8")
    (kb / "Gesetz.txt").write_text(GERMAN, encoding="utf-8")
    report = ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb,
                    show_progress=False)
    text = format_report(report)
    assert "Gesetz.md" in text and "Gesetz.txt" in text
    assert report.files_ingested == 1 and report.complete  # the PDF was read: nothing is missing


def test_the_chunk_count_shown_holds_for_the_whole_ingest_and_the_rate_is_said(tmp_path, settings):
    """The chunk bar's total is known before the last file is read (the files left, by the chunks a byte gave so
    far), so its time left is the ingest's, and the summary says chunks a second (issue 73 item 4)."""
    from rabbithole_lab.support.progress_bars import progress_shown_by

    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    for number in range(1, 4):  # three laws of the same length
        sections = "\n\n".join(f"§ {n} Pflicht {n}\n" + f"Der Betreiber {number} hat die Anlage {n} zu prüfen. " * 30
                               for n in range(1, 9))
        (kb / f"Gesetz{number}.txt").write_text(sections, encoding="utf-8")
    lines: list[str] = []
    with progress_shown_by(lines.append):
        report = ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb)
    totals = [int(found.group(1)) for line in lines if (found := re.match(r"Chunks: \d+/(\d+)", line))]
    assert report.chunks_added > 6 and totals and totals[-1] == report.chunks_added
    assert abs(totals[0] - report.chunks_added) <= 2  # after the first file, not a third of it
    assert re.search(r"\d+ s, \d+\.\d chunks a second", format_report(report))
