"""The index follows the folder: removed, renamed, replaced and duplicated files end as a clean ingest of the
final folder would; a PDF that cannot be read gives way to its text file; searches during an ingest read the
last complete search files, and an ingest finishes a rebuild an earlier one did not."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pymupdf

from rabbithole_lab.kb.ingest.chunking import chunk_document
from rabbithole_lab.kb.ingest.ingest import format_report, ingest, ingest_fingerprint
from rabbithole_lab.kb.ingest.ingest_lock import ingest_lock
from rabbithole_lab.kb.ingest.parse import parse_file
from rabbithole_lab.kb.kb_factory import open_index
from rabbithole_lab.kb.store.search_files import VECTORS_FILE

LANTERNS = "§ 1 Laternen\nIm Hafen werden die Laternen jeden Abend von der Hafenmeisterin gezählt.\n"
SCALES = "§ 2 Waagen\nJede Waage auf dem Fischmarkt ist vor dem ersten Markttag zu eichen.\n"
BELLS = "§ 3 Glocken\nDie Glocke am Kai läutet bei Nebel alle fünf Minuten.\n"
GULLS = "§ 4 Möwen\nMöwen dürfen auf dem Markt nicht gefüttert werden.\n"
ROPES = "§ 5 Taue\nFestmacher werden einmal im Jahr auf Abrieb geprüft und bei Bedarf ersetzt.\n"


def _write(folder: Path, files: dict[str, str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")


def _state(index, db: Path) -> dict:
    """Everything an ingest decides: chunks, registry entries and what the search files hold."""
    out: dict = {"registry": json.loads(index.auto_registry_path.read_text(encoding="utf-8"))}
    for collection in index.collections():
        chunks = index.get_chunks(collection)
        out[collection] = sorted((c.id, c.doc, c.section, c.text) for c in chunks)
        if chunks:
            out[f"{collection}/bm25"] = sorted(index.bm25(collection).ids)
    return out


def _fresh(settings, db: Path):
    """The index as a later process opens it."""
    return open_index(settings, None, db)


def test_removed_renamed_replaced_and_duplicated_files_end_as_a_clean_ingest(tmp_path, settings):
    kb = tmp_path / "kb"
    folder = kb / "Hafen__db_inserted"
    _write(folder, {"a_laternen.md": LANTERNS, "b_waagen.md": SCALES, "c_glocken.md": BELLS,
                    "d_original.md": GULLS, "e_kopie.md": GULLS})
    db = tmp_path / "db"
    first = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    assert [Path(i.path).name for i in first.skipped] == ["e_kopie.md"]

    (folder / "b_waagen.md").unlink()  # removed
    (folder / "c_glocken.md").rename(folder / "f_glocken.md")  # renamed
    (folder / "a_laternen.md").write_text(ROPES, encoding="utf-8")  # replaced
    (folder / "d_original.md").unlink()  # the original of a copy goes: the copy is indexed now
    second = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)

    assert sorted(second.removed) == ["Hafen/b_waagen.md", "Hafen/c_glocken.md", "Hafen/d_original.md"]
    summary = format_report(second)
    assert "\u22123 removed" in summary and "b_waagen.md" in summary and not second.skipped
    clean_db = tmp_path / "clean-db"
    ingest(kb, open_index(settings, kb, clean_db), settings.kb, show_progress=False)
    assert _state(_fresh(settings, db), db) == _state(_fresh(settings, clean_db), clean_db)

    later = _fresh(settings, db)  # a later search finds no trace of what left
    assert later.documents("Hafen") == ["a_laternen.md", "e_kopie.md", "f_glocken.md"]
    assert not later.bm25("Hafen").search("Waage eichen", k=5) and "b_waagen.md" not in later.bm25("Hafen").docs
    registered = {entry["filename"] for entry in json.loads(later.auto_registry_path.read_text(encoding="utf-8"))}
    assert registered == {"a_laternen.md", "e_kopie.md", "f_glocken.md"}


def test_a_file_that_can_no_longer_be_read_leaves_the_index(tmp_path, settings):
    kb = tmp_path / "kb"
    folder = kb / "Hafen__db_inserted"
    _write(folder, {"glocken.md": BELLS, "moewen.md": GULLS})
    db = tmp_path / "db"
    ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    (folder / "moewen.md").write_bytes(b"")
    report = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    assert report.removed == ["Hafen/moewen.md"] and "empty" in report.skipped[0].reason
    assert _fresh(settings, db).documents("Hafen") == ["glocken.md"]


def _text_pdf(path: Path, lines: list[str]) -> None:
    document = pymupdf.open()
    page = document.new_page()
    for row, text in enumerate(lines):
        page.insert_text((72, 72 + 14 * row), text, fontsize=10)
    document.save(path)
    document.close()


def _image_only_pdf(path: Path) -> None:
    document = pymupdf.open()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 32, 32), 0)
    pixmap.clear_with(180)
    document.new_page().insert_image(pymupdf.Rect(72, 72, 200, 200), pixmap=pixmap)
    document.save(path)
    document.close()


def test_an_unreadable_pdf_gives_way_to_its_text_file_and_a_readable_one_does_not(tmp_path, settings):
    kb = tmp_path / "kb"
    folder = kb / "Hafen__db_inserted"
    folder.mkdir(parents=True)
    _image_only_pdf(folder / "gescannt.pdf")
    (folder / "gescannt.md").write_text("# Gescannt\n\n" + BELLS, encoding="utf-8")
    _text_pdf(folder / "gelesen.pdf", ["§ 4 Möwen", "Möwen dürfen auf dem Markt nicht gefüttert werden."])
    (folder / "gelesen.txt").write_text(GULLS, encoding="utf-8")
    db = tmp_path / "db"
    report = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)

    assert _fresh(settings, db).documents("Hafen") == ["gelesen.pdf", "gescannt.md"]
    summary = format_report(report)
    assert "gescannt.pdf: no text layer" in summary and "its text gescannt.md is ingested instead" in summary
    assert "gelesen.txt: not used (gelesen.pdf read)" in summary

    # the scan gets a text layer (OCR): the PDF is read and its text file's chunks leave
    _text_pdf(folder / "gescannt.pdf", ["§ 3 Glocken", "Die Glocke am Kai läutet bei Nebel alle fünf Minuten."])
    again = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    assert again.removed == ["Hafen/gescannt.md"]
    assert _fresh(settings, db).documents("Hafen") == ["gelesen.pdf", "gescannt.pdf"]


def test_a_truncated_pdf_is_reported_as_corrupt(tmp_path, settings):
    kb = tmp_path / "kb"
    folder = kb / "Hafen__db_inserted"
    folder.mkdir(parents=True)
    whole = tmp_path / "whole.pdf"
    _text_pdf(whole, ["§ 1 Laternen"] + [f"Zeile {n} über die Laternen im Hafen." for n in range(40)])
    data = whole.read_bytes()
    (folder / "abgeschnitten.pdf").write_bytes(data[: len(data) // 10])
    (folder / "glocken.md").write_text(BELLS, encoding="utf-8")
    report = ingest(kb, open_index(settings, kb, tmp_path / "db"), settings.kb, show_progress=False)
    [issue] = report.skipped
    assert issue.reason.startswith("corrupt PDF: damaged or truncated") and "OCR" not in issue.reason


def _half_written(index, collection: str, text: str, name: str) -> None:
    """Chunks of a document written by an ingest that stopped before the document was complete."""

    class Stop(Exception):
        pass

    class StopAfterFirstBatch:
        def update(self, _count):
            raise Stop

    path = index.db_path.parent / name
    path.write_text(text, encoding="utf-8")
    document = parse_file(path)
    chunks = chunk_document(document, collection, 1500, 0)
    try:
        index.replace_document(collection, name, chunks, ingest_fingerprint(document.file_hash, 1500, 0),
                               progress=StopAfterFirstBatch())
    except Stop:
        pass


def test_a_search_during_an_ingest_reads_the_last_complete_state(tmp_path, settings):
    kb = tmp_path / "kb"
    _write(kb / "Hafen__db_inserted", {"glocken.md": BELLS})
    db = tmp_path / "db"
    ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    before = sorted(_fresh(settings, db).bm25("Hafen").ids)
    folder = _fresh(settings, db).search_files_folder("Hafen")
    generation = folder.resolve()

    with ingest_lock(db):  # an ingest is writing
        _half_written(_fresh(settings, db), "Hafen", ROPES, "taue.md")
        reader = _fresh(settings, db)
        assert sorted(reader.bm25("Hafen").ids) == before
        assert not reader.bm25("Hafen").search("Festmacher Abrieb", k=3)
        assert folder.resolve() == generation  # a reader never rewrites the files while the lock is held

        shutil.rmtree(generation)  # and with no complete files at all, a search builds them in memory...
        folder.unlink()
        reader = _fresh(settings, db)
        assert sorted(reader.bm25("Hafen").ids) == before  # ...from the complete documents only
        query = reader.embedder.embed_query("Glocke bei Nebel")
        assert [chunk.doc for chunk, _ in reader.dense("Hafen", query, k=5)] == ["glocken.md"]
        assert not folder.exists()


def test_a_swapped_generation_leaves_a_reader_of_the_old_one_whole(tmp_path, settings):
    kb = tmp_path / "kb"
    _write(kb / "Hafen__db_inserted", {"glocken.md": BELLS})
    db = tmp_path / "db"
    ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    reader = _fresh(settings, db)
    query = reader.embedder.embed_query("Glocke bei Nebel")
    assert reader.dense("Hafen", query, k=1)
    _write(kb / "Hafen__db_inserted", {"moewen.md": GULLS})
    ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)  # swaps in a new generation
    [(chunk, similarity)] = reader.dense("Hafen", query, k=1)  # the old generation, still mapped
    assert chunk.doc == "glocken.md" and np.isfinite(similarity)
    folder = reader.search_files_folder("Hafen")
    assert folder.is_symlink() and len(list(folder.parent.glob("*.gen-*"))) == 1
    assert sorted(_fresh(settings, db).bm25("Hafen").docs) == ["glocken.md", "moewen.md"]


def test_an_ingest_finishes_the_rebuild_an_earlier_one_did_not(tmp_path, settings):
    kb = tmp_path / "kb"
    folder = kb / "Hafen__db_inserted"
    _write(folder, {"glocken.md": BELLS})
    db = tmp_path / "db"
    ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    # an ingest that wrote a changed document and was killed before it rebuilt the search files
    (folder / "glocken.md").write_text(BELLS + "Bei Sturm läutet sie ohne Pause.\n", encoding="utf-8")
    index = open_index(settings, kb, db)
    document = parse_file(folder / "glocken.md")
    size, overlap = settings.kb.chunking_for("Hafen")
    index.replace_document("Hafen", "glocken.md", chunk_document(document, "Hafen", size, overlap),
                           ingest_fingerprint(document.file_hash, size, overlap))
    assert not index.search_files_in_step("Hafen")

    report = ingest(kb, open_index(settings, kb, db), settings.kb, show_progress=False)
    assert report.files_unchanged == 1 and report.files_ingested == 0
    fresh = _fresh(settings, db)
    assert fresh.search_files_in_step("Hafen")
    vectors_file = fresh.search_files_folder("Hafen") / VECTORS_FILE
    assert vectors_file.exists() and fresh.bm25("Hafen").search("Sturm Pause", k=1)
