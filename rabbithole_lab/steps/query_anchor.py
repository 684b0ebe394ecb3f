"""The query anchor: what the clarification settled (the question, the aspects the researcher added, the
cases left out, the provisions named), its summary in the run's language, and a correction of it at the
plan's approval. Everything the research searches and judges by reads the anchor (`nodes/common.py`)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from rabbithole_lab.agent.services import Services
from rabbithole_lab.reasoning.dialogue_terms import anchor_text
from rabbithole_lab.records import RESEARCH_SUMMARY, Notice, notice
from rabbithole_lab.schemas import AnchorTerms

_TERM_KEYS = ("additions", "exclusions", "provisions")


def anchor_notice(anchor: dict) -> Notice:
    """What will be researched, for the reader (messages/reasons.py words it line by line): the question, then
    what was added, left out and named."""
    return notice(RESEARCH_SUMMARY, question=anchor.get("original_query", ""),
                  **{key: list(anchor.get(key) or []) for key in _TERM_KEYS})


def specific(terms: AnchorTerms, share: Callable[[str], float], max_share: float) -> AnchorTerms:
    """The terms without a one-word addition most of the collection speaks of ("Person", "Betrieb" in a law
    corpus): `share` is the share of the collection's chunks holding a word. Phrases ("Kategorie A") and
    exclusions stay as said."""
    kept = [term for term in terms.additions if len(term.split()) > 1 or share(term) <= max_share]
    return terms.model_copy(update={"additions": kept})


def researcher_terms(services: Services, question: str, conversation: list[dict], language: str,
                     collection: str | None) -> AnchorTerms:
    """What the researcher's words add to `question`, as the reasoner reads them, less a one-word addition the
    collection calls generic."""
    terms = services.reasoner.anchor_terms(question, conversation, language)
    return specific(terms, partial(services.kb.term_share, collection=collection),
                    services.settings.hitl.generic_term_share)


def corrected(anchor: dict, correction: AnchorTerms) -> dict:
    """The anchor with a correction's terms: an added aspect or provision joins its list (and leaves the
    exclusions), an exclusion joins the exclusions (and leaves the additions)."""
    updated = {key: list(anchor.get(key) or []) for key in _TERM_KEYS}
    for key in _TERM_KEYS:
        for term in getattr(correction, key):
            if term not in updated[key]:
                updated[key].append(term)
    excluded = {term.lower() for term in updated["exclusions"]}
    newly_added = {term.lower() for term in [*correction.additions, *correction.provisions]}
    updated["exclusions"] = [term for term in updated["exclusions"] if term.lower() not in newly_added]
    updated["additions"] = [term for term in updated["additions"]
                            if term.lower() not in excluded or term.lower() in newly_added]
    terms = AnchorTerms(**updated)
    return anchor | terms.model_dump() | {"text": anchor_text(anchor.get("original_query", ""), terms)}
