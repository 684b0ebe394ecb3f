"""The LLM layer of reference detection and its hybrid with the rules (seed 000 §4c): regex first, an LLM
reference added only where the rules found nothing of the same key or text."""

from __future__ import annotations

import logging
from collections.abc import Callable

from rabbithole_lab.rabbithole.references import detect_references_regex, overlaps
from rabbithole_lab.records import DetectedReference
from rabbithole_lab.schemas import ExtractedReferenceList

logger = logging.getLogger(__name__)


def _llm_to_detected(result: ExtractedReferenceList, text: str, doc: str | None) -> list[DetectedReference]:
    references = []
    for item in result.references:
        snippet = item.reference_text.strip()
        start = text.find(snippet) if snippet else -1
        if start < 0:  # a reference is text of the document: what it does not hold was made up or translated
            logger.info("LLM reference %r is not in the text; dropped", snippet[:60])
            continue
        parsed = detect_references_regex(snippet, doc)
        sections = parsed[0].sections if parsed else []
        # a target the model names must be named in the text too (not a translation or a guess)
        named = item.target_document if item.target_document and item.target_document in text else None
        book = (parsed[0].book if parsed else None) or named
        context = book or (doc if item.reference_type == "legal_section" else None)
        references.append(
            DetectedReference(
                type=item.reference_type,
                target=snippet if not context or context in snippet else f"{snippet} {context}",
                original_text=snippet,
                start=start,
                end=start + len(snippet),
                book=book,
                sections=sections,
                unit=parsed[0].unit if parsed else "",
                document_context=context,
                extraction_method="llm",
            )
        )
    return references


def merge_hybrid(regex_refs: list[DetectedReference], llm_refs: list[DetectedReference]) -> list[DetectedReference]:
    """Seed 000 §4c: regex first; an LLM result is dropped when its type:target key was seen
    or its target text overlaps an existing reference."""
    seen = {ref.key for ref in regex_refs}
    combined = list(regex_refs)
    for ref in llm_refs:
        if ref.key in seen:
            continue
        if any(
            (ref.end > ref.start and overlaps(ref, other))
            or ref.original_text.lower() in other.original_text.lower()
            or other.original_text.lower() in ref.original_text.lower()
            for other in combined
        ):
            continue
        seen.add(ref.key)
        combined.append(ref)
    return combined


def detect_references(
    text: str,
    doc: str | None = None,
    method: str = "regex",
    llm_extract: Callable[[str], ExtractedReferenceList | None] | None = None,
) -> list[DetectedReference]:
    """Detect references with `method` regex | llm | hybrid. `llm_extract` runs the LLM prompt."""
    if method == "regex" or llm_extract is None:
        if method != "regex":
            logger.debug("No LLM for reference extraction; using the regex layer")
        return detect_references_regex(text, doc)
    try:
        extracted = llm_extract(text)
    except Exception as exc:  # an LLM failure must not lose the regex layer's findings
        logger.warning("LLM reference extraction failed (%s); using the regex layer", exc)
        return detect_references_regex(text, doc)
    if extracted is None:  # the extractive stand-in (the model is cut off by the breaker): the rules do it
        return detect_references_regex(text, doc)
    llm_refs = _llm_to_detected(extracted, text, doc)
    if method == "llm":
        return llm_refs
    return merge_hybrid(detect_references_regex(text, doc), llm_refs)
