"""The engine room's units on their own: rank (values), admit (the assembler), stop (the policy)."""

from rabbithole_lab.rabbithole.assemble import assemble
from rabbithole_lab.rabbithole.candidates import Candidate
from rabbithole_lab.rabbithole.engine import admit, admit_items
from rabbithole_lab.rabbithole.rank import (
    backlink_value,
    cited_value,
    hit_value,
    new_terms_share,
    reference_shares,
)
from rabbithole_lab.rabbithole.stop import StopPolicy
from rabbithole_lab.records import Reason, VectorResult
from rabbithole_lab.settings import ReferenceSettings


def _result(chunk_id: str, chars: int = 100, section: str = "", doc: str = "A.pdf") -> VectorResult:
    return VectorResult(chunk_id=chunk_id, text="x" * chars, doc=doc, collection="c", page_start=1, page_end=1,
                        section=section)


def _candidate(chunk_id: str, value: float, chars: int = 100, parent: str = "", kind: str = "hit") -> Candidate:
    return Candidate(_result(chunk_id, chars), kind, 1 if parent else 0, 0.5, value=value,
                     parent=parent)  # type: ignore[arg-type]


# ---- rank ----------------------------------------------------------------------------------------

def test_hit_values_fall_with_rank():
    values = [hit_value(rank) for rank in range(5)]
    assert values[0] == 1.0 and values == sorted(values, reverse=True) and values[3] == 0.25


def test_a_citer_hands_its_value_to_its_references_by_gate_share():
    assert reference_shares([0.6, 0.2, 0.2]) == [0.6, 0.2, 0.2]
    assert reference_shares([0.5]) == [1.0]  # one reference takes all of its citer's weight
    assert reference_shares([0.0, 0.0]) == [0.0, 0.0]
    assert cited_value(0.5, 0.5) == 0.25


def test_a_backlink_gains_part_of_the_cited_hit_but_never_overtakes_it():
    assert backlink_value(0.2, 1.0, 1) == 1.0
    assert backlink_value(0.2, 1.0, 4) == 0.45
    assert backlink_value(0.9, 0.5, 1) == 0.9  # a better hit keeps its own value


def test_a_section_chunk_is_worth_only_the_question_terms_it_adds():
    question = "Welche Grenzwerte gelten für Quantenstrahlung in Werkstätten?"
    first = "§ 3 Grenzwerte. Für Quantenstrahlung gilt ein Grenzwert von 5 Einheiten."
    same = "Der Grenzwert für Quantenstrahlung wird jährlich geprüft."
    more = "In Werkstätten gelten die Grenzwerte nach Satz 1 entsprechend."
    assert new_terms_share(question, first, same) == 0.0
    assert new_terms_share(question, first, more) > 0.0


# ---- admit ---------------------------------------------------------------------------------------

def test_the_assembler_admits_by_value_per_character_within_the_budget():
    pool = [_candidate("a", 1.0, 1000), _candidate("b", 0.5, 200), _candidate("c", 0.4, 1000),
            _candidate("d", 0.0, 10)]
    order = [c.chunk_id for c in admit(pool, 10_000)]
    assert order == ["b", "a", "c"]  # b is worth more per character; d is worth nothing
    assert [c.chunk_id for c in admit(pool, 1100)] == ["b", "a"]  # stops once the budget is reached


def test_a_budget_in_items_admits_the_most_valuable_whatever_their_length():
    pool = [_candidate("a", 1.0, 1000), _candidate("b", 0.5, 200), _candidate("c", 0.4, 1000),
            _candidate("d", 0.0, 10), _candidate("e", 0.9, 100, parent="c", kind="followed")]
    assert [c.chunk_id for c in admit_items(pool, 2)] == ["a", "b"]  # by characters, b would come first
    # a followed item still waits for its citer
    assert [c.chunk_id for c in admit_items(pool, 5)] == ["a", "b", "c", "e"]


def test_a_prefix_of_a_large_budget_is_the_context_of_a_small_one():
    pool = [_candidate(str(i), 1 / (i + 1), 100 + 37 * (i % 5)) for i in range(30)]
    large = [c.chunk_id for c in admit(pool, 3000)]
    small = [c.chunk_id for c in admit(pool, 1200)]
    assert large[: len(small)] == small


def test_a_followed_item_waits_for_its_citer():
    citer = _candidate("citer", 0.2, 1000)
    cited = _candidate("cited", 0.2, 100, parent="citer", kind="followed")
    other = _candidate("other", 0.5, 1000)
    order = [c.chunk_id for c in admit([cited, other, citer], 10_000)]
    assert order.index("citer") < order.index("cited")
    orphan = _candidate("orphan", 0.9, 100, parent="citer", kind="followed")
    # a parent the pool does not hold blocks nothing: the item stands on its own value
    assert [c.chunk_id for c in admit([orphan, other], 10_000)] == ["orphan", "other"]


def test_strict_admission_never_exceeds_the_budget_and_fills_with_smaller_items():
    items = [("big", 1.0, 800), ("huge", 0.9, 5000), ("small", 0.1, 150)]
    picked = assemble(items, 1000, value=lambda i: i[1], size=lambda i: i[2], key=lambda i: i[0], strict=True)
    assert [i[0] for i in picked] == ["big", "small"]
    loose = assemble(items, 1000, value=lambda i: i[1], size=lambda i: i[2], key=lambda i: i[0])
    assert [i[0] for i in loose] == ["big", "small", "huge"]  # the benchmarks' rule: the last item may run over


# ---- stop ----------------------------------------------------------------------------------------

def test_the_stop_policy_guards_with_reasons():
    policy = StopPolicy(ReferenceSettings().model_copy(update=dict(max_follow_per_chunk=1,
                                                                   convergence_same_doc_threshold=1,
                                          early_refusal_count=2, early_refusal_threshold=0.5, token_budget=10_000,
                                          follow_depth=1)))
    assert policy.may_descend(0) and not policy.may_descend(1)
    assert not policy.skip_reason("legal_section:§ 1 X", "c1", "X.pdf")
    policy.followed("legal_section:§ 1 X", "c1", "X.pdf", [_result("t1", 400)], best_relevance=0.9)
    assert policy.skip_reason("legal_section:§ 1 X", "c2", "Y.pdf") == Reason("already_followed")
    assert policy.skip_reason("legal_section:§ 2 Y", "c1", "Y.pdf") == Reason("chunk_limit")
    # convergence counts per task: from any citing chunk, the document has had its references
    assert policy.skip_reason("legal_section:§ 2 X", "c2", "X.pdf") == Reason("converged", {"doc": "X.pdf"})
    assert not policy.skip_reason("legal_section:§ 2 Y", "c2", "Y.pdf")
    assert policy.tokens == 100
    policy.followed("legal_section:§ 3 Z", "c3", "Z.pdf", [], best_relevance=0.1)
    assert not policy.stopped and policy.reasons == [Reason("converged", {"doc": "X.pdf"})]
    exhausted = StopPolicy(ReferenceSettings().model_copy(update={"token_budget": 0}))
    assert exhausted.skip_reason("k", "c", None) == Reason("token_budget") and exhausted.stopped


def test_convergence_counts_only_references_that_leave_the_citing_document():
    policy = StopPolicy(ReferenceSettings().model_copy(update=dict(convergence_same_doc_threshold=2,
                                                                   max_follow_per_chunk=10)))
    for number in range(1, 5):  # a law citing its own sections: its structure, never a convergence
        assert not policy.skip_reason(f"legal_section:§ {number} X", "c1", "X.pdf", citer_doc="X.pdf")
        policy.followed(f"legal_section:§ {number} X", "c1", "X.pdf", [], best_relevance=0.9, citer_doc="X.pdf")
    # two references from Y into X, and X is closed to a third from anywhere else
    for number in (5, 6):
        policy.followed(f"legal_section:§ {number} X", "c2", "X.pdf", [], best_relevance=0.9, citer_doc="Y.pdf")
    assert policy.skip_reason("legal_section:§ 7 X", "c3", "X.pdf",
                              citer_doc="Z.pdf") == Reason("converged", {"doc": "X.pdf"})
    # ... and still open to X's own references
    assert not policy.skip_reason("legal_section:§ 7 X", "c1", "X.pdf", citer_doc="X.pdf")


def test_early_refusal_after_the_first_irrelevant_hops():
    policy = StopPolicy(ReferenceSettings().model_copy(update=dict(early_refusal_count=2, early_refusal_threshold=0.5)))
    policy.followed("a", "c1", None, [], best_relevance=0.2)
    assert not policy.stopped
    policy.followed("b", "c2", None, [], best_relevance=0.3)
    assert policy.stopped == Reason("early_refusal") and policy.skip_reason("c", "c3", None) == policy.stopped
