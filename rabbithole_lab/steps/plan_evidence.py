"""What the plan stands on: the provisions the clarification's search found (with the provisions they cite
that it did not find), and whether a proposed task would find anything the question's own search does not.

A plan made of templates with the question's nouns appended ("… – Thema: Grenzwerte, Personen") searched what
the question searched and closed early, 3-4 tasks of 5. A task names what round 1 found instead ("Welche Werte
legt § 12 QStrG fest?", "Was regelt § 6 QStrV?"), and a task whose search and named sections hold nothing
beyond the question's context is not proposed."""

from __future__ import annotations

from collections.abc import Iterable

from rabbithole_lab.agent.nodes.node_common import chunk_key
from rabbithole_lab.agent.services import Services
from rabbithole_lab.kb.retrieval.query import named_documents
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.rabbithole.resolve import ReferenceResolver
from rabbithole_lab.reasoning.base import FoundProvision
from rabbithole_lab.records import VectorResult

SECTION_REFERENCES = ("legal_section", "section")
# provisions of round 1 a plan names, best first: the question's own task holds the rest
MAX_FOUND_PROVISIONS = 3


def named_sections(services: Services, text: str, anchor: str, language: str) -> list[VectorResult]:
    """The sections `text` names ("Was regelt § 77 StrlSchG?"), resolved as a followed reference is: a bare
    "§ 77" is the law the question or the dialogue named. Searching the words instead found a section that
    shares them (§ 130 for "Was regelt § 77?")."""
    kb = services.kb
    named = named_documents(anchor, kb.registry)
    resolver = ReferenceResolver(kb)
    hits: list[VectorResult] = []
    for reference in detect_references_regex(text, named[0] if named else None, language):
        if reference.type in SECTION_REFERENCES:
            resolution = resolver.resolve(reference, query_hint=anchor)
            if resolution.path == "section_index":  # the section itself, not a search near it
                hits += resolution.results
    return hits


def provision_label(services: Services, passage: VectorResult) -> str:
    """How the plan names a passage's provision: its section and the document's display name ("§ 12 QStrG");
    empty for a passage outside any section."""
    section = (passage.section or "").strip()
    return f"{section} {services.kb.registry.display_name(passage.doc)}" if section else ""


def found_provisions(services: Services, passages: Iterable[VectorResult], anchor: str,
                     language: str) -> list[FoundProvision]:
    """The provisions of round 1's passages, most relevant first, each with the provisions its passages cite
    that round 1 did not find (resolved in the section index, so the label is a section that exists)."""
    ranked = sorted(passages, key=lambda passage: -passage.score)
    labels: dict[str, list[VectorResult]] = {}
    for passage in ranked:
        label = provision_label(services, passage)
        if label:
            labels.setdefault(label, []).append(passage)
    resolver = ReferenceResolver(services.kb)
    found: list[FoundProvision] = []
    for label, own in list(labels.items())[:MAX_FOUND_PROVISIONS]:
        cited: list[str] = []
        for passage in own:
            for reference in detect_references_regex(passage.text, passage.doc, language):
                if reference.type not in SECTION_REFERENCES:
                    continue
                resolution = resolver.resolve(reference, query_hint=anchor)
                if resolution.path != "section_index" or not resolution.results:
                    continue
                target = provision_label(services, resolution.results[0])
                if target and target != label and target not in labels and target not in cited:
                    cited.append(target)
        found.append(FoundProvision(label=label, cites=tuple(cited)))
    return found


def question_context_keys(services: Services, anchor: str, collection: str | None) -> set[str]:
    """The passages the question's own task will hold (its first stage, as far as its budget reaches)."""
    settings = services.settings.search
    held: set[str] = set()
    used_chars = 0
    for hit in services.kb.retrieve(anchor, k=settings.first_stage_pool, collection=collection):
        used_chars += len(hit.text)
        if used_chars > settings.question_context_chars:
            break
        held.add(chunk_key(hit))
    return held


def adds_to(services: Services, task: str, concepts: list[str], known: set[str], anchor: str, language: str,
            collection: str | None) -> bool:
    """Whether the task's search (its words with the question's concepts, as a task's base query) or the
    sections it names find a passage outside `known`: a task that finds nothing new closes early as soon as
    it runs (`adapt_todo`'s test), so it is not proposed."""
    query = f"{task} {' '.join(concepts)}".strip()
    hits = services.kb.search(query, k=services.settings.search.chunks_per_query, collection=collection)
    hits += named_sections(services, task, anchor, language)
    return any(chunk_key(hit) not in known for hit in hits)
