"""The verdict: the provision the answer names as decisive is chosen by the fitted provision score, said as a
field of the answer, quoted first, and the answer abstains when provisions tie; the quality check scores a wrong
verdict below a right one (text written for these tests; the real extractive reasoner and embedder)."""

from __future__ import annotations

import pytest

from rabbithole_lab.reasoning.base import AskedFor, SynthesisInput
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence
from rabbithole_lab.reasoning.extractive.writer.provision_score import (
    PROVISION_FEATURES,
    ProvisionWeights,
    ScoredProvision,
    decide,
    fitted_provision_weights,
)
from rabbithole_lab.records import ChunkWithInfo
from tests.answer_reading import lead, quotes_of

HERDING = ("(1) Hat ein Hirte die zulässige Weidezeit überschritten, darf er die Herde nur weiter hüten, wenn die "
           "Aufsicht zustimmt und die Summe seiner Weidezeiten in den folgenden drei Jahren das Doppelte des "
           "Grenzwertes nach § 9 nicht übersteigt.")
LIMIT = "(1) Der Grenzwert der Weidezeit eines Hirten beträgt 200 Stunden im Jahr."
QUESTION = "Ein Hirte hat die zulässige Weidezeit überschritten. Darf er die Herde weiter hüten?"


@pytest.fixture(scope="module")
def reasoner(demo_kb):
    return ExtractiveReasoner(demo_kb.index.embedder)


def _chunk(doc: str, section: str, text: str, relevance: float, depth: int = 0, cited_by: str = "") -> ChunkWithInfo:
    return ChunkWithInfo(chunk_text=f"{section} {text}", document=doc, page=1, chunk_id=f"{doc}:{section}",
                         section=section, relevance_score=relevance, depth=depth, cited_by=cited_by,
                         tier="primary" if depth == 0 else "secondary")


def _context():
    herding = _chunk("WeidV.pdf", "§ 4", HERDING, 0.95)
    limit = _chunk("WeidG.pdf", "§ 9", LIMIT, 0.7, depth=1, cited_by=herding.chunk_id)
    visits = _chunk("WeidG.pdf", "§ 20", "(1) Die Aufsicht kann Weideflächen jederzeit besichtigen.", 0.6)
    chains = [{"citing": ["WeidV.pdf", "§ 4"], "cited": [["WeidG.pdf", "§ 9"]], "recorded": True}]
    return [herding, visits], [limit], chains


def test_the_provision_search_ranks_first_is_decisive_though_it_cites_the_limit(reasoner):
    primary, secondary, chains = _context()
    out = reasoner.synthesize(SynthesisInput(anchor=QUESTION, language="de", question=QUESTION, primary=primary,
                                             secondary=secondary, chains=chains))
    assert out.verdict["stated"] and (out.verdict["doc"], out.verdict["section"]) == ("WeidV.pdf", "§ 4")
    assert 0.0 < out.verdict["score"] <= 1.0
    # the lead quotes the named provision's deciding sentence first
    first = quotes_of(lead(out.answer))[0]
    assert "weiter hüten" in first.quote and first.citations[0][0] == "WeidV.pdf"


def _scored(provision: Provision, **features: float) -> ScoredProvision:
    return ScoredProvision(provision, {name: features.get(name, 0.0) for name in PROVISION_FEATURES})


def _provision(doc: str, section: str, text: str) -> Provision:
    chunk = _chunk(doc, section, text, 0.9)
    provision = Provision(doc, section, [chunk], [chunk])
    provision.sentences = [Sentence(text, chunk, 0.5, 0)]
    return provision


def test_a_clear_lead_is_stated_and_a_tie_is_not():
    table = ProvisionWeights(-2.0, {"relevance": 4.0}, min_score=0.5, min_margin=0.1)
    first, second = _provision("A.pdf", "§ 1", "Die Frist beträgt drei Tage."), _provision(
        "B.pdf", "§ 2", "Die Frist beträgt fünf Tage.")
    clear = decide([_scored(first, relevance=1.0), _scored(second, relevance=0.3)], table)
    assert clear.stated and clear.decisive is first and clear.margin > 0.1
    tie = decide([_scored(first, relevance=1.0), _scored(second, relevance=0.98)], table)
    assert not tie.stated and {id(p) for p in tie.contenders()} == {id(first), id(second)}
    unsure = decide([_scored(first, relevance=0.4), _scored(second, relevance=0.0)], table)
    assert not unsure.stated  # the best is below the score threshold


def test_a_softmax_table_reads_the_provisions_together_so_a_close_second_lowers_the_best():
    table = ProvisionWeights(0.0, {"relevance": 4.0}, min_score=0.6, model="softmax")
    first, second, third = (_provision(doc, "§ 1", "Die Frist beträgt drei Tage.") for doc in ("A.pdf", "B.pdf",
                                                                                                "C.pdf"))
    alone = decide([_scored(first, relevance=1.0), _scored(second, relevance=0.2)], table)
    assert alone.stated and alone.decisive is first
    assert sum(item.score for item in alone.ranked) == pytest.approx(1.0)
    # the same best provision with a close rival beside it: its share of belief falls below the threshold
    crowded = decide([_scored(first, relevance=1.0), _scored(second, relevance=0.2),
                      _scored(third, relevance=0.95)], table)
    assert crowded.decisive is first and crowded.score < alone.score and not crowded.stated
    # read alone, a logistic table would have given the best the same score in both contexts
    logistic = ProvisionWeights(0.0, {"relevance": 4.0})
    assert decide([_scored(first, relevance=1.0)], logistic).score == decide(
        [_scored(first, relevance=1.0), _scored(third, relevance=0.95)], logistic).score


def test_provisions_that_tie_are_each_quoted_and_none_is_named_decisive(reasoner, monkeypatch):
    from rabbithole_lab.reasoning.extractive.writer import answer_candidates

    # the same words in two laws, the same relevance: nothing tells them apart
    deadline = "(1) Ein Störfall ist der Aufsicht binnen drei Tagen zu melden."
    chunks = [_chunk("MeldA.pdf", "§ 2", deadline, 0.9), _chunk("MeldB.pdf", "§ 2", deadline.replace("drei", "fünf"),
                                                                 0.9)]
    table = fitted_provision_weights()
    strict = ProvisionWeights(table.bias, table.weights, min_score=table.min_score, min_margin=0.2)
    monkeypatch.setattr(answer_candidates, "decide", lambda scored: decide(scored, strict))
    question = "Binnen welcher Frist ist ein Störfall zu melden?"
    out = reasoner.synthesize(SynthesisInput(anchor=question, language="de", question=question, primary=chunks))
    assert not out.verdict["stated"] and out.verdict["label"] == ""
    cited_docs = {doc for quote in quotes_of(lead(out.answer)) for doc, _ in quote.citations}
    assert cited_docs == {"MeldA.pdf", "MeldB.pdf"}


def test_the_check_scores_a_wrong_verdict_below_a_right_one(reasoner):
    primary, secondary, chains = _context()
    request = SynthesisInput(anchor=QUESTION, language="de", question=QUESTION, primary=primary,
                             secondary=secondary, chains=chains)
    out = reasoner.synthesize(request)
    sources = primary + secondary
    right = reasoner.assess_quality(QUESTION, out.answer, sources, "de",
                                    asked=AskedFor(question=QUESTION, verdict=out.verdict))
    wrong_claim = out.verdict | {"doc": "WeidG.pdf", "section": "§ 20", "label": "§ 20 WeidG", "chain": []}
    wrong = reasoner.assess_quality(QUESTION, out.answer, sources, "de",
                                    asked=AskedFor(question=QUESTION, verdict=wrong_claim))
    assert right.verdict is not None and wrong.verdict is not None
    assert wrong.verdict < right.verdict
    assert len(wrong.issues_found) > len(right.issues_found)
    absent = reasoner.assess_quality(QUESTION, out.answer, sources, "de", asked=AskedFor(
        question=QUESTION, verdict=out.verdict | {"doc": "WeidG.pdf", "section": "§ 99", "label": "§ 99 WeidG"}))
    assert absent.verdict == 0


def test_the_checks_belief_in_a_right_verdict_falls_when_a_rival_stands_as_close(reasoner):
    """The check judges the named provision by its own table, a softmax over the context's provisions: the same
    right verdict is believed less when a second provision says nearly the same and is as well found, and the
    check then names that rival."""
    primary, secondary, chains = _context()
    request = SynthesisInput(anchor=QUESTION, language="de", question=QUESTION, primary=primary,
                             secondary=secondary, chains=chains)
    out = reasoner.synthesize(request)
    # the rival: another ordinance's rule for the same case, as well found and citing the same limit
    rival = _chunk("WeidV2.pdf", "§ 4", HERDING.replace("drei Jahren", "vier Jahren"), 0.95)
    its_limit = secondary[0].model_copy(update={"chunk_id": "WeidG.pdf:§ 9:rival", "cited_by": rival.chunk_id})
    asked = AskedFor(question=QUESTION, verdict=out.verdict)
    alone = reasoner.assess_quality(QUESTION, out.answer, primary + secondary, "de", asked=asked)
    crowded = reasoner.assess_quality(QUESTION, out.answer, [rival, *primary, *secondary, its_limit], "de",
                                      asked=asked)
    assert out.verdict["section"] == "§ 4" and alone.verdict is not None and crowded.verdict is not None
    assert crowded.verdict < alone.verdict
    assert any("WeidV2" in issue for issue in crowded.issues_found)
    assert not any("WeidV2" in issue for issue in alone.issues_found)


def test_a_task_whose_best_sentence_points_to_a_rule_is_answered_by_the_rule_too():
    from rabbithole_lab.reasoning.base import AnswerTask
    from rabbithole_lab.reasoning.extractive.writer.answer_selection import select
    from rabbithole_lab.reasoning.extractive.writer.answer_text import statement_cost
    from tests.reasoning.test_answer_selection import _context, _provision

    pointer = _provision("§ 5", ["Wird die Tragkraft überschritten, ist nach § 6 zu verfahren."], chunk_id="c5")
    rule = _provision("§ 6", ["(1) Der Kran darf danach nur mit Zustimmung der Aufsicht weiter betrieben werden."],
                      depth=1, chunk_id="c6")
    rule.chunks[0].cited_by = "c5"
    other = _provision("§ 1", ["Diese Verordnung gilt für Kräne."], chunk_id="c1")
    context = _context("Welche Pflichten hat der Betreiber?", [(other, [0.9]), (pointer, [0.4]), (rule, [0.3])])
    for candidate in context.candidates:
        candidate.task_terms = [1.0 if candidate.provision is pointer else 0.2 if candidate.provision is rule else 0.0]
    task = AnswerTask(1, "Was gilt, wenn die Tragkraft überschritten wird?", [], {"c5", "c6"}, own=True)
    selection = select(context, [], lambda s: statement_cost(s, "de"), 1_200, 4_000, [task])
    answered = [s for s in selection.statements() if s.task is task]
    assert [s.provision.section for s in answered] == ["§ 5", "§ 6"]
    assert answered[1].source is pointer  # said as the chain "§ 5 → § 6"


def test_a_score_the_verdict_alone_lowers_is_not_rewritten(reasoner):
    from rabbithole_lab.schemas import QualityAssessment

    # a rewrite keeps the verdict: cutting the answer to its lead would not raise what only the verdict lowered
    weak_verdict = QualityAssessment(factual_accuracy=100, semantic_validity=60, structural_integrity=100,
                                     citation_correctness=100, query_relevance=80, verdict=20)
    assert weak_verdict.overall_score == weak_verdict.content_score >= 375
    assert not reasoner.decide_remediation(QUESTION, weak_verdict, 375, "de").retry
    weak_content = weak_verdict.model_copy(update={"semantic_validity": 10, "query_relevance": 40})
    assert weak_content.content_score < 375 and reasoner.decide_remediation(QUESTION, weak_content, 375, "de").retry


def test_a_provision_of_definitions_is_marked_unless_a_definition_is_asked():
    """The `definitions` feature: a provision headed as definitions, or whose sentences define terms, is marked,
    a rule is not; and nothing is marked when the question asks what a term means."""
    from rabbithole_lab.reasoning.extractive.writer.provision_score import provision_features
    from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate

    terms = _provision("WeidG.pdf", "§ 2", "(1) Hirte ist, wer eine Herde von mehr als zehn Tieren hütet.")
    terms.chunks[0].heading = "§ 2 Begriffsbestimmungen"
    rule = _provision("WeidG.pdf", "§ 9", LIMIT)
    english = _provision("Rules.pdf", "1.2", "A 'herder' means a person who keeps more than ten animals.")
    provisions = [terms, rule, english]
    candidates = [Candidate(p.sentences[0], p, {"terms": 0.5}, [0.5], [], frozenset(), score=0.5)
                  for p in provisions]

    def marked(question: str) -> dict[str, float]:
        scored = provision_features(provisions, candidates, {}, [set()], set(), question)
        return {item.provision.section: item.features["definitions"] for item in scored}

    assert marked("Wie lange darf ein Hirte die Herde hüten?") == {"§ 2": 1.0, "§ 9": 0.0, "1.2": 1.0}
    assert set(marked("Was ist ein Hirte?").values()) == {0.0}
    assert set(marked("What is meant by a herder?").values()) == {0.0}


@pytest.mark.parametrize("decisive, stated", [("§ 4 WeidV", True), ("§ 77 WeidV", False), ("", False)])
def test_a_models_answer_carries_the_verdict_its_decisive_field_names(reasoner, decisive, stated):
    """On the LLM path the model names the decisive provision in a field of its JSON; the record is scored over
    the same context as the extractive writer's, with the chain the answer names; a provision the context does
    not hold, or none, is no stated verdict (the scripted model stands for Ollama)."""
    import json

    from rabbithole_lab.reasoning.fallback import ExtractiveFallback
    from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner
    from tests.scripted_fake import ScriptedFakeChatModel

    answer = ("Weiter hüten darf er nur mit Zustimmung der Aufsicht (§ 4 WeidV) [WeidV.pdf, p. 1]; der Grenzwert "
              "beträgt 200 Stunden im Jahr (§ 9 WeidG) [WeidG.pdf, p. 1].")
    model = ScriptedFakeChatModel(script={"synthesize": json.dumps({"answer": answer, "decisive": decisive,
                                                                    "key_findings": []})})
    writer = ExtractiveFallback(LLMReasoner(model, max_retries=0, backoff_s=0.0), reasoner)
    primary, secondary, chains = _context()
    chains = [chain | {"source": "§ 4 WeidV", "target": "§ 9 WeidG", "reference": "§ 9", "reason": "cited"}
              for chain in chains]  # what the model's prompt says of each chain
    out = writer.synthesize(SynthesisInput(anchor=QUESTION, language="de", question=QUESTION, primary=primary,
                                           secondary=secondary, chains=chains))
    assert out.answer == answer and out.verdict["stated"] is stated
    if stated:
        assert (out.verdict["doc"], out.verdict["section"]) == ("WeidV.pdf", "§ 4")
        assert 0.0 < out.verdict["score"] <= 1.0
        assert [link["section"] for link in out.verdict["chain"]] == ["§ 9"]
    else:
        assert out.verdict["label"] == "" and len(out.verdict["candidates"]) >= 2
