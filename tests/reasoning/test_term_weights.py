"""Choosing the answer's sentences: the question's terms weighted by how rare they are in the context, and
the embedder's similarity only for text in a language it was trained on."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.extractive.term_weights import TermWeights, sentence_terms
from rabbithole_lab.records import ChunkWithInfo
from tests.answer_reading import lead, provisions_named, quotes_holding
from tests.conftest import english_only

# written for these tests: a made-up ordinance on lantern workshops
COMMON = [
    "Der Betreiber einer Laternenwerkstatt hat die Werkstatt sauber zu halten.",
    "Der Betreiber einer Laternenwerkstatt meldet jeden Brand der Behörde.",
    "Der Betreiber einer Laternenwerkstatt führt ein Betriebsbuch.",
]
RARE = "Dochtschneider dürfen höchstens 12 Stunden am Tag arbeiten."
QUESTION = "Wie lange dürfen Dochtschneider in der Laternenwerkstatt des Betreibers arbeiten?"


def _chunk(section: str, sentences: list[str], page: int) -> ChunkWithInfo:
    text = " ".join(sentences)
    return ChunkWithInfo(chunk_text=text, document="LatWerkV.pdf", page=page, page_end=page,
                         chunk_id=f"lat-{section}", section=section, tier="primary", relevance_score=0.8,
                         collection="demo")


def test_a_rare_term_weighs_more_than_a_common_one_and_an_absent_term_nothing():
    weights = TermWeights([*COMMON, RARE])

    def weight_of(word: str) -> float:
        return max(weights.weight(term) for term in sentence_terms(word))

    assert weight_of("Dochtschneider") > weight_of("Betreiber") > 0
    assert weight_of("Kerzenzieher") == 0.0
    question = sentence_terms(QUESTION)
    assert weights.overlap(question, RARE) > weights.overlap(question, COMMON[0]) > 0
    assert weights.overlap(sentence_terms("Kerzenzieher"), RARE) == 0.0  # nothing to tell apart
    assert weights.overlap(question, QUESTION) == pytest.approx(1.0)


@pytest.fixture(scope="module")
def embed(demo_kb):
    return demo_kb.index.embedder


def test_german_text_is_scored_by_its_terms_when_the_embedder_reads_english_only(embed):
    chunks = [_chunk("§ 1", COMMON, 1), _chunk("§ 2", [RARE], 2)]
    sentences = [*COMMON, RARE]
    weights = TermWeights(sentences)
    expected = [weights.overlap(sentence_terms(QUESTION), s) for s in sentences]
    readings = ExtractiveReasoner(english_only(embed))._sentence_readings(QUESTION, chunks)
    assert readings.terms(sentences) == pytest.approx(expected)
    assert readings.meaning(sentences) == [0.0] * len(sentences)  # no evidence from a model that cannot read it
    # the multilingual default reads German: its similarity is measured
    assert embed.languages == frozenset({"*"})
    reads_german = ExtractiveReasoner(embed)._sentence_readings(QUESTION, chunks)
    assert any(value > 0 for value in reads_german.meaning(sentences))


def test_the_answer_opens_with_the_provision_that_carries_the_questions_rare_term(embed):
    request = SynthesisInput(anchor=QUESTION, language="de",
                             primary=[_chunk("§ 1", COMMON, 1), _chunk("§ 2", [RARE], 2)])
    answer = ExtractiveReasoner(embed).synthesize(request).answer
    assert provisions_named(lead(answer))[0] == "§ 2 LatWerkV"
    assert [doc for s in quotes_holding(lead(answer), "12 Stunden") for doc, _ in s.citations][:1] == ["LatWerkV.pdf"]
