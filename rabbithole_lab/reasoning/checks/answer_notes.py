"""What the research itself writes into an answer, in the reader's language, whichever reasoner wrote the rest:
the answer when nothing was found, and the note where a quoted passage refers to a section that is not there."""

from __future__ import annotations

from rabbithole_lab.evidence.reference_edges import mark_unresolved
from rabbithole_lab.messages.catalogue import reasoner_text
from rabbithole_lab.messages.reasons import edge_reason
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.schemas import SynthesisOutput


def nothing_found(request: SynthesisInput) -> SynthesisOutput:
    """Nothing was retrieved: the answer says so, naming the question; no model is asked to write from nothing."""
    said = reasoner_text(request.language)["no_answer"].format(anchor=request.question or request.anchor)
    return SynthesisOutput(answer=said, nothing_found=said)


def with_unresolved_notes(answer: str, edges: list[dict], language: str) -> str:
    """The answer with a note after each quote whose reference names a section its law does not have, the
    reference's reason worded in `language` ("(§ 999 QStrG: Abschnitt in QStrG nicht vorhanden)")."""
    return mark_unresolved(answer, edges, lambda edge: edge_reason(edge, language))
