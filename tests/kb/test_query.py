"""Query understanding without an LLM: the EN->DE glossary, language guess and clauses."""

from __future__ import annotations

import pytest

from rabbithole_lab.kb.retrieval.query import clauses
from rabbithole_lab.language.bridge import GLOSSARY_FILES, glossary, glossary_terms
from rabbithole_lab.language.detection import detect_language


def _glossary_lines() -> list[str]:
    text = GLOSSARY_FILES[0].read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


def test_every_glossary_line_is_one_lowercase_english_key_and_glossary_terms():
    for line in _glossary_lines():
        english, _, german = line.partition("\t")
        assert english and english == english.lower().strip(), line
        assert "\t" not in german and all(term.strip() for term in german.split(";")), line


def test_no_english_key_is_defined_twice():
    keys = [line.split("\t", 1)[0] for line in _glossary_lines()]
    assert len(keys) == len(set(keys)) == len(glossary())


def test_the_longest_known_phrase_wins():
    terms = glossary_terms("the type approval of a device").split()
    assert terms[0] == "Bauartzulassung" and "Vorrichtung" in terms
    assert "Zulassung" not in terms and "Genehmigung" not in terms  # "approval" alone is not looked up
    assert glossary_terms("approval") == "Zulassung Genehmigung"


def test_plural_and_hyphenated_words_find_their_entry():
    # the glossary lists "approval", "inspection" and "leak tightness"; a question writes them as it likes
    assert glossary_terms("approvals") == glossary_terms("approval") != ""
    assert glossary_terms("the inspections") == glossary_terms("inspection") != ""
    assert glossary_terms("its leak-tightness") == glossary_terms("its leak tightness") != ""


def test_a_form_the_glossary_lists_takes_its_own_entry_not_the_pool_of_its_singular():
    # "record" and "records" are both listed; "records" keeps its own terms, not also "Aufzeichnung"
    assert glossary_terms("records").split() == glossary()["records"]
    assert glossary_terms("the devices") != glossary_terms("the device")


def test_only_the_plural_is_stripped_not_a_verb_ending_or_a_derivation():
    # "contains" and "containment" share a stem for a derivational stemmer; a device that contains a
    # source says nothing about containment (Einschluss)
    assert glossary_terms("containment") == "Einschluss"
    assert "Einschluss" not in glossary_terms("a device that contains a source")
    # "planned" is no plan (Pläne)
    assert glossary_terms("a planned facility") == glossary_terms("a facility")


@pytest.mark.parametrize("question", ["What was found in the subject?", "Who can use it and keep it?",
                                      "Which ones apply?"])
def test_everyday_english_words_add_no_glossary_terms(question):
    assert glossary_terms(question) == ""


def test_query_language_tells_english_from_german():
    assert detect_language("Which dose limits apply to occupationally exposed persons?") == "en"
    assert detect_language("Welche Grenzwerte gelten für beruflich exponierte Personen?") == "de"


def test_a_multi_part_question_splits_into_clauses():
    parts = clauses("Welche Gebühr wird erhoben, und wie oft fällt die Prüfung an?")
    assert parts == ["Welche Gebühr wird erhoben", "und wie oft fällt die Prüfung an"]


# ---- the real corpus: English questions over German law ------------------------------


@pytest.mark.corpus
@pytest.mark.parametrize(
    ("question", "section"),
    [
        ("How often must the leak tightness of a sealed radioactive source be tested?", ("StrlSchV.pdf", "§ 89")),
        ("When must a worker carry a radiation passbook?", ("StrlSchV.pdf", "§ 174")),
        ("What does teleradiology with an x-ray device require?", ("StrlSchV.pdf", "§ 123")),
        # title words the glossary reached only once it covered every section title's vocabulary
        ("How is gas generation assessed as a criterion for a repository host rock?", ("StandAG.pdf", "Anlage 7")),
        ("Who enforces the waste rules in the armed forces?", ("KrWG.pdf", "§ 66")),
    ],
)
def test_an_english_question_finds_the_german_section_through_the_glossary(corpus_kb, question, section):
    # the lexical leg, where the glossary's terms act; the fused ranking is measured by bench/xref.py (with
    # equal fusion weights the last question's section ranks 9th fused: the dense leg does not find it)
    assert section in {(hit.doc, hit.section) for hit in corpus_kb.search(question, k=5, mode="bm25")}


def test_the_dense_leg_of_an_english_question_over_german_text_carries_the_glossary_terms(corpus_kb, monkeypatch):
    embedded: list[str] = []
    embed_query = corpus_kb.index.embedder.embed_query
    monkeypatch.setattr(corpus_kb.index.embedder, "embed_query",
                        lambda text: embedded.append(text) or embed_query(text))
    question = "When must a worker carry a radiation passbook?"
    hits = corpus_kb.search(question, k=5, mode="dense")
    assert embedded == [f"{question} {glossary_terms(question)}"] and "Strahlenpass" in embedded[0]
    assert ("StrlSchV.pdf", "§ 174") in {(hit.doc, hit.section) for hit in hits}
    corpus_kb.search("Wann braucht eine Arbeitskraft einen Strahlenpass?", k=5, mode="dense")
    assert embedded[-1] == "Wann braucht eine Arbeitskraft einen Strahlenpass?"  # German stays as asked


def test_without_the_glossary_bridge_an_english_question_is_searched_as_asked(corpus_kb, monkeypatch):
    """SEARCH_GLOSSARY_BRIDGE=false (the English-entries ablation, bench/english_entries.py) leaves the glossary's
    German terms out of both legs: each embeds or matches the question as written."""
    question = "When must a worker carry a radiation passbook?"
    embedded: list[str] = []
    matched: list[str] = []
    embed_query = corpus_kb.index.embedder.embed_query
    monkeypatch.setattr(corpus_kb.index.embedder, "embed_query",
                        lambda text: embedded.append(text) or embed_query(text))
    for collection in corpus_kb.index.collections():
        bm25 = corpus_kb.index.bm25(collection)
        monkeypatch.setattr(bm25, "search", lambda text, k, doc=None, _search=bm25.search: matched.append(text)
                            or _search(text, k, doc=doc))
    corpus_kb.search(question, k=5)
    assert "Strahlenpass" in embedded[-1] and all("Strahlenpass" in text for text in matched)  # as shipped
    monkeypatch.setattr(corpus_kb.settings, "glossary_bridge", False)
    embedded.clear(), matched.clear()
    corpus_kb.search(question, k=5)
    assert embedded == [question] and matched and set(matched) == {question}
