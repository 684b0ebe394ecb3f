"""One language code in every layer, and one bridge between the languages whose glossaries are data."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from rabbithole_lab import language
from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.kb.retrieval.lexical import Bm25Index, analyze
from rabbithole_lab.language import bridge

PACKAGE = Path(language.__file__).parent.parent
ANGLING = ("§ 1 Zweck\nDiese Ordnung regelt den Fischfang am Stadtsee.\n\n"
           "§ 2 Angelschein\nWer am Stadtsee fischt, muss einen gültigen Angelschein bei sich führen.\n\n"
           "§ 3 Schonzeit\nVom 1. März bis 30. April ruht der Fischfang.\n")
QUESTION = "Who must carry a fishing permit at the lake?"


@pytest.fixture
def restored_glossary():
    before = {english: list(terms) for english, terms in bridge.glossary().items()}
    yield
    bridge._entries.clear()
    bridge._entries.update(before)
    for cached in (bridge._glossary_by_words, bridge.glossary_terms, bridge.glossary_alternatives):
        cached.cache_clear()


def _angling_kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb" / "See__db_inserted"
    folder.mkdir(parents=True)
    (folder / "Seeordnung.md").write_text(ANGLING, encoding="utf-8")
    return tmp_path / "kb"


def test_a_language_is_one_code_whose_profile_names_its_stemmer():
    assert language.profile("de").SNOWBALL_STEMMER == "german" and language.profile("en").SPLITS_COMPOUNDS is False
    with pytest.raises(ValueError, match="de, en"):
        language.profile("german")
    # German words split into their compounds' parts; English ones are stemmed as English
    assert len(analyze("Dosisgrenzwerte", "de")) > 1 == len(analyze("Dosisgrenzwerte", "en"))
    assert analyze("limits", "en") == ["limit"]


def test_no_module_outside_the_language_package_names_a_stemmer():
    """Snowball's names ("german", "english") are each profile's; every other module passes "de" or "en"."""
    named = []
    for path in PACKAGE.rglob("*.py"):
        if "language" in path.relative_to(PACKAGE).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in ("german", "english"):
                named.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not named


def test_only_the_bridge_reads_a_glossary():
    readers = [path.relative_to(PACKAGE) for path in PACKAGE.rglob("*.py")
               if "glossary_en_de" in path.read_text(encoding="utf-8")]
    assert readers == [Path("language/bridge.py")]


def test_an_index_keeps_its_languages_code_and_reads_one_stored_by_its_stemmers_name(tmp_path):
    index = Bm25Index.build(["a", "b"], ["Der Angelschein ist mitzuführen.", "Die Schonzeit ruht."], ["S.md", "S.md"])
    assert index.language == "de"
    index.save(tmp_path)
    assert json.loads((tmp_path / "meta.json").read_text(encoding="utf-8"))["language"] == "de"
    meta = json.loads((tmp_path / "meta.json").read_text(encoding="utf-8"))
    (tmp_path / "meta.json").write_text(json.dumps({**meta, "language": "german"}), encoding="utf-8")
    stored = Bm25Index.load(tmp_path)  # as an index written before codes
    assert stored.language == "de" and stored.search("Angelschein", 1)[0][0] == "a"


def test_the_bridge_crosses_only_from_english_into_german(restored_glossary):
    assert bridge.rendering("Which dose limits apply to workers?", "de")
    assert bridge.rendering("Which dose limits apply to workers?", "en") == ""
    assert bridge.rendering("Welche Grenzwerte gelten für Arbeitskräfte?", "de") == ""  # German already
    # told the text's language, the bridge does not guess it (a single word says too little)
    assert bridge.rendering("dose", "de", text_language="en") == bridge.glossary_terms("dose") != ""


def test_a_knowledge_bases_glossary_reaches_its_search(tmp_path, settings, restored_glossary):
    kb = _angling_kb(tmp_path)
    ingest(kb, open_index(settings, kb, tmp_path / "db"), settings.kb, show_progress=False)
    before = open_knowledge_base(settings, kb, tmp_path / "db").search(QUESTION, k=3, mode="bm25")
    assert all("Angelschein" not in hit.text for hit in before)  # no glossary names a fishing permit
    (kb / bridge.KB_GLOSSARY_FILE).write_text("# Fischerei\nfishing permit\tAngelschein; Fischereischein\n"
                                              "lake\tSee\n", encoding="utf-8")
    found = open_knowledge_base(settings, kb, tmp_path / "db").search(QUESTION, k=3, mode="bm25")
    assert found and "Angelschein" in found[0].text
    assert bridge.extend_glossary(kb) == 0  # read once


def test_a_knowledge_bases_glossary_adds_terms_to_an_entry_it_shares(tmp_path, restored_glossary):
    packaged = list(bridge.glossary()["radiation"])
    (tmp_path / bridge.KB_GLOSSARY_FILE).write_text("radiation\tStrahlenfeld; " + packaged[0] + "\n", encoding="utf-8")
    assert bridge.extend_glossary(tmp_path) == 1
    assert bridge.glossary()["radiation"] == [*packaged, "Strahlenfeld"]
    assert "Strahlenfeld" in bridge.glossary_terms("radiation")


def test_a_malformed_glossary_names_its_line(tmp_path, restored_glossary):
    (tmp_path / bridge.KB_GLOSSARY_FILE).write_text("# ok\nfishing permit Angelschein\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"\.rabbithole-glossary\.tsv:2"):
        bridge.extend_glossary(tmp_path)


def test_an_exclusion_reads_a_glossary_term_the_knowledge_base_added_later(tmp_path, restored_glossary):
    from rabbithole_lab.reasoning.dialogue_terms import excluded

    sentence = "Wer am Stadtsee fischt, muss einen gültigen Angelschein bei sich führen."
    assert not excluded(sentence, ["angling"])  # no glossary knows the word yet
    (tmp_path / bridge.KB_GLOSSARY_FILE).write_text("angling\tAngelschein\n", encoding="utf-8")
    assert bridge.extend_glossary(tmp_path) == 1
    assert excluded(sentence, ["angling"])  # the same case, read again with the knowledge base's term
