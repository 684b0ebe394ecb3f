"""A plan worth approving (issue 72 item 4): a task whose search finds only what the question's own context holds is
not proposed (it closed early as soon as it ran), and what round 1 found is named for the planner with the
provisions it cites. On the demo KB, with the real embedder and the extractive reasoner."""

from __future__ import annotations

import pytest

from rabbithole_lab.agent.nodes.node_common import chunk_key
from rabbithole_lab.steps.plan_evidence import found_provisions, named_sections, question_context_keys
from rabbithole_lab.usecase.research_case import Research
from tests.agent.conftest import GERMAN_QUESTION, SMALL_QUESTION_CONTEXT, services_with

ENGLISH_LIMITS = "Which dose limits apply to occupationally exposed persons for quantum radiation?"


def _plan(services, tmp_path, question: str):
    research = Research(services, tmp_path / "sessions.sqlite")
    try:
        research.start(question)
        status = research.answer("/end")
    finally:
        research.close()
    assert status.kind == "interrupt" and status.interrupt["type"] == "todo_approval", status
    return status.interrupt["todo_list"]["items"], status.state


def test_round_one_provisions_are_named_with_the_provisions_they_cite(demo_kb):
    services = services_with(demo_kb)
    passages = demo_kb.search(GERMAN_QUESTION, k=6)
    found = found_provisions(services, passages, GERMAN_QUESTION, "de")
    labels = [provision.label for provision in found]
    assert labels and all(label.startswith("§ ") for label in labels)
    assert len(labels) == len(set(labels))
    # § 5 QStrV cites § 12 QStrG ("Grenzwerte nach § 12 des Quantenstrahlenschutzgesetzes") and § 6, § 13: a cited
    # provision is named when round 1 did not find it itself, as a section that exists
    cites = {provision.label: provision.cites for provision in found}
    assert any(cites.values()), cites
    for label, cited in cites.items():
        assert not set(cited) & set(labels) and label not in cited
        for target in cited:
            section, name = target.rsplit(" ", 1)
            assert demo_kb.section_lookup(f"{name}.pdf", section), target


@pytest.mark.parametrize("question", [GERMAN_QUESTION, ENGLISH_LIMITS])
def test_a_task_that_only_repeats_the_question_context_is_not_proposed(demo_kb, tmp_path, question):
    """The demo KB is small: the question's own context holds what any task would find, so no task is proposed
    beyond the question, and the run says how many were left out."""
    services = services_with(demo_kb)
    items, state = _plan(services, tmp_path, question)
    assert [item["id"] for item in items] == [0]
    assert any(message["key"] == "plan_repeats" and message["values"]["count"] >= 1
               for message in state["messages"])


def test_with_a_small_question_context_each_proposed_task_finds_something_new(demo_kb, tmp_path):
    services = services_with(demo_kb, search=SMALL_QUESTION_CONTEXT)
    items, state = _plan(services, tmp_path, GERMAN_QUESTION)
    proposed = [item for item in items if item["id"] != 0]
    assert proposed  # the collection holds more than the question's context now
    known = question_context_keys(services, state["query_anchor"]["text"], None)
    for item in proposed:
        hits = demo_kb.search(f"{item['task']} {' '.join(state['key_concepts'])}",
                              k=services.settings.search.chunks_per_query)
        hits += named_sections(services, item["task"], state["query_anchor"]["text"], "de")
        assert any(chunk_key(hit) not in known for hit in hits), item["task"]
