"""The stop policy of reference following: every guard in one place, each with a recorded reason.

Guards (seed 000 and DESIGN §5): depth limit, visited set, references followed per citing chunk,
convergence (once `convergence_same_doc_threshold` references of one task or question have led into
one other document, following stops going into it), token budget, early refusal (the first N followed
references all irrelevant).

Convergence counts only references that leave the citing document. Most references in a statute
point into the statute itself ("nach Absatz 2", "§ 5 gilt entsprechend": 83 % of the resolved
references of the shared law corpus); they are how a law is built, not a pull into one source. Counted
alike, three of them closed a law to the rest of its own references. Depth, visited set, the per-chunk
limit and the token budget still bound following inside a document.

The policy answers one question per reference — may it be followed, and if not, why — and keeps the
counters it needs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rabbithole_lab.rabbithole.candidates import estimate_tokens
from rabbithole_lab.records import Reason, VectorResult
from rabbithole_lab.settings import ReferenceSettings


@dataclass
class StopPolicy:
    settings: ReferenceSettings
    visited: set[str] = field(default_factory=set)
    tokens: int = 0
    stopped: Reason = field(default_factory=Reason)  # a run-wide stop (token budget, early refusal); empty while
    # following goes on
    reasons: list[Reason] = field(default_factory=list)
    _followed_into: Counter[str] = field(default_factory=Counter)  # doc -> references of this task landed there
    _followed_from: Counter[str] = field(default_factory=Counter)  # citing chunk -> references followed
    _first_relevances: list[float] = field(default_factory=list)

    def note(self, reason: Reason) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    def may_descend(self, depth: int) -> bool:
        """Whether references found at `depth` (0 = first-stage hits) may still be followed."""
        return depth < self.settings.follow_depth

    def skip_reason(self, reference_key: str, citer_chunk: str, target_doc: str | None,
                    citer_doc: str | None = None) -> Reason:
        """Why this reference is not followed, or an empty reason when it may be."""
        if reference_key in self.visited:
            return Reason("already_followed")
        if self.stopped:
            return self.stopped
        if self._followed_from[citer_chunk] >= self.settings.max_follow_per_chunk:
            return Reason("chunk_limit")
        other = _other_document(target_doc, citer_doc)
        if other and self._followed_into[other] >= self.settings.convergence_same_doc_threshold:
            reason = Reason("converged", {"doc": other})
            self.note(reason)
            return reason
        if self.tokens >= self.settings.token_budget:
            self.stopped = Reason("token_budget")
            self.note(self.stopped)
            return self.stopped
        return Reason()

    def followed(self, reference_key: str, citer_chunk: str, target_doc: str | None,
                 targets: list[VectorResult], best_relevance: float, citer_doc: str | None = None,
                 counts_for_refusal: bool = True) -> None:
        """Count a followed reference; the first few that `counts_for_refusal` decide on early refusal (a
        footnote followed without the gate says nothing on whether following fits the question)."""
        self.visited.add(reference_key)
        self._followed_from[citer_chunk] += 1
        other = _other_document(target_doc, citer_doc)
        if other:
            self._followed_into[other] += 1
        self.tokens += sum(estimate_tokens(target.text) for target in targets)
        if counts_for_refusal and len(self._first_relevances) < self.settings.early_refusal_count:
            self._first_relevances.append(best_relevance)
            if (len(self._first_relevances) == self.settings.early_refusal_count
                    and all(r < self.settings.early_refusal_threshold for r in self._first_relevances)):
                self.stopped = Reason("early_refusal")
                self.note(self.stopped)


def _other_document(target_doc: str | None, citer_doc: str | None) -> str | None:
    """The document a reference leads into when it leaves the citing one (what convergence counts)."""
    return target_doc if target_doc and target_doc != citer_doc else None
