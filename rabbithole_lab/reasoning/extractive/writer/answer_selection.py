"""What the extractive answer quotes, chosen in two explicit steps from the ranked candidates
(`answer_candidates.py`, `sentence_ranker.py`):

1. **cover** what the answer must hold:
   - the verdict first: the decisive provision chosen by the fitted provision score (`provision_score.py`),
     quoted with its deciding sentence (its best for the question's first part); when no provision stands out,
     each contender's deciding sentence (the lead then says that several provisions come into question);
   - per question part, the best sentence carrying what that part asks for (a figure for "wie hoch", a period
     for "wie lange", a body for "wer"): the part's own words read by the fitted table;
   - per reference the decisive provision makes (its provision is the first part's), the best sentence of
     the provision it cites, said as the chain ("§ 73 StrlSchV → § 78 StrlSchG"), in the lead when it scores
     near the best sentence, else below it;
   - per researcher addition or named provision, the best sentence holding it;
   - per task the researcher wrote, the best sentence of what it found, read by the task's own words;
2. **fill** the remaining room by score, within the answer's character budget: the lead's room first, then
   the body's. It adds to what the answer already says: sentences of the provisions the cover quotes, of the
   entry and of what the entry cites; of provisions outside these, at most `UNCHAINED_FILL_SHARE` of the
   answer's characters (the answer does not spread over every provision the search touched).

Then the chains are completed: a part's statement reached by a reference, whose citing provision the answer does
not quote yet, gets the sentence making that reference (when it scores above the fill's floor) below the lead, in
place of the weakest fills when the answer is full (`_complete_chains`).

The cover statements open the answer (its lead) while they fit the lead's budget; the first always does.
Every sentence is quoted with the neighbour it forms one statement with (`Provision.whole_statements`), and
once.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from rabbithole_lab.language.bridge import glossary_alternatives
from rabbithole_lab.reasoning.base import AnswerTask
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence, names_provision, reached_from
from rabbithole_lab.reasoning.extractive.writer.answer_candidates import AnswerContext
from rabbithole_lab.reasoning.extractive.writer.provision_score import Verdict, fitted_check_weights
from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate, score_for_part
from rabbithole_lab.reasoning.text import contains_concept, stems

MAX_REFERENCES_COVERED = 2  # references of the decisive provision whose target the cover quotes
CITING_MIN_SHARE = 0.8  # the citing provision's sentence is quoted when it scores this share of the best
REFERENCE_MIN_SHARE = 0.8  # a reference's target stands in the lead when its sentence scores this share of the best
FILL_MIN_SHARE = 0.35  # a filled sentence scores at least this share of the best candidate's score
# the share of the answer's characters the fill may spend on provisions neither quoted by the cover nor on the
# entry's chain. Counted in characters, not provisions: a law's section holds ten times the text of a rulebook's
# passage, so a count of provisions that kept German answers on the chain (decision 020) starved the English
# rulebook's (decision 034, German dev gen 1 and UKFIN dev together)
UNCHAINED_FILL_SHARE = 0.3

Covers = Literal["verdict", "rival", "part", "reference", "addition", "task", "fill"]


@dataclass
class Statement:
    """One quoted statement: sentences of one provision, in reading order."""

    provision: Provision
    sentences: list[Sentence]
    covers: Covers
    source: Provision | None = None  # the provision whose reference led here (a chain statement)
    score: float = 0.0
    lead_worthy: bool = True  # it may stand in the lead (a low-scoring reference's target stands below it)
    task: AnswerTask | None = None  # the researcher's task it answers (it stands in that task's section)


@dataclass
class Selection:
    lead: list[Statement] = field(default_factory=list)
    body: list[Statement] = field(default_factory=list)
    excerpts: dict[int, str] = field(default_factory=dict)  # id(sentence) -> how a long one is quoted
    verdict: Verdict | None = None  # what the lead names as decisive, or that several provisions come into question

    @property
    def abstains(self) -> bool:
        """The lead names no single decisive provision: it quotes the contenders."""
        return self.verdict is not None and bool(self.verdict.ranked) and not self.verdict.stated

    def statements(self) -> list[Statement]:
        return self.lead + self.body


def _owner(statement: Statement, tasks: list[AnswerTask]) -> AnswerTask | None:
    if statement.task is not None:
        return statement.task
    ids = {s.chunk.chunk_id for s in statement.sentences}
    return next((task for task in tasks if ids & task.chunk_ids), None)


def citing_provisions(context: AnswerContext, target: Provision) -> list[Provision]:
    """The provisions of the context that cite `target` (by a followed or a read reference), the entry first,
    then the strongest."""
    citing = [p for p in context.provisions if p is not target
              and any(q is target for q in reached_from(context.provisions, p, context.links))]
    return sorted(citing, key=lambda p: (p is not context.entry, -p.strength))


def citing_sentence(citing: Provision, target: Provision, ranked: list[Candidate],
                    taken: set[int]) -> Candidate | None:
    """The citing provision's sentence that names the target's section ("… nach § 78 des …"), else its best."""
    own = [c for c in ranked if c.provision is citing and id(c.sentence) not in taken]
    named = [c for c in own if target.section and _names_section(c.text, target.section)]
    return (named or own or [None])[0]


def _names_section(text: str, section: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(' '.join(section.split()))}(?![\w])", " ".join(text.split())) is not None


def says_link(quoted: list[Sentence], phrases: set[str] | None) -> bool:
    """A link only read in the citing text ("nach Anlage 2") is the evidence only where a quoted sentence
    says its words; a reference recorded by following (`phrases` None) always is."""
    if phrases is None:
        return True
    texts = [" ".join(sentence.text.split()) for sentence in quoted]
    return any(" ".join(phrase.split()) in text for phrase in phrases for text in texts)


def holds(addition: str, candidate: Candidate) -> bool:
    """The candidate holds what the researcher added: it stands in the provision the addition names, or it
    has the addition's words (or a glossary translation)."""
    if candidate.provision.section and names_provision(addition, candidate.provision):
        return True
    return contains_concept(addition, stems(candidate.text), glossary_alternatives(addition))


class _Cover:
    """The cover step: the statements the answer must hold, in the lead's order; each sentence taken once."""

    def __init__(self, context: AnswerContext):
        self.context, self.ranked = context, context.candidates
        self.taken: set[int] = set()
        self.covered: list[Statement] = []

    def statement(self, candidate: Candidate, covers: Covers, source: Provision | None = None) -> Statement | None:
        """The candidate as a whole statement (with the neighbour it forms one with), unless it is taken."""
        if id(candidate.sentence) in self.taken:
            return None
        whole = [s for s in candidate.provision.whole_statements([candidate.sentence]) if id(s) not in self.taken]
        self.taken.update(id(s) for s in whole)
        return Statement(candidate.provision, whole, covers, source, candidate.score)

    def verdict(self) -> None:
        """The decisive provision's deciding sentence (its best for the question's first part) opens the answer;
        when no provision stands out, each contender's does."""
        verdict = self.context.verdict
        if verdict is None or not verdict.ranked:
            return
        kinds = self.context.part_kinds[0] if self.context.part_kinds else set()
        for provision in [verdict.decisive] if verdict.stated else verdict.contenders():
            own = [c for c in self.ranked if c.provision is provision]
            if own and (item := self.statement(max(own, key=lambda c: score_for_part(c, 0, kinds)), "verdict")):
                self.covered.append(item)
        # a stated verdict the check's table is not sure of: its closest rival's deciding sentence stands in the
        # lead too ("in Betracht kommt auch …"), the verdict stays
        rival = verdict.rival(fitted_check_weights())
        own = [c for c in self.ranked if c.provision is rival] if rival is not None else []
        if own and (item := self.statement(max(own, key=lambda c: score_for_part(c, 0, kinds)), "rival")):
            self.covered.append(item)

    def parts(self) -> None:
        """Per question part, the best sentence carrying most of what it asks for ("bis wann entscheidet die
        Behörde": a period and a body over a mere condition); a part whose best is quoted already is answered."""
        for index, kinds in enumerate(self.context.part_kinds):
            most = max((len(c.kinds & kinds) for c in self.ranked), default=0)
            pool = [c for c in self.ranked if len(c.kinds & kinds) == most] if most else self.ranked
            best = max(pool, key=lambda c: score_for_part(c, index, kinds))
            if (item := self.statement(best, "part")) is not None:
                self.covered.append(item)

    def chain(self) -> None:
        """The first part's statement reached by a reference is said with the provision citing it, whose sentence
        making the reference opens the lead when it scores near the best ("§ 73 StrlSchV → § 78 StrlSchG"); then
        what the decisive provision cites, the paragraph a reference names first, quoted whatever its words (the
        reference is the evidence), in the lead when it scores near the best, else below it."""
        best_score = self.ranked[0].score
        verdict = self.context.verdict
        if verdict is not None and verdict.ranked and not verdict.stated:
            return  # the contenders are quoted each for itself: no chain is claimed for one of them
        if self.covered and self.covered[0].covers != "verdict":
            first = self.covered[0]
            citing = citing_provisions(self.context, first.provision)
            if citing:
                first.source = citing[0]
                sentence = citing_sentence(citing[0], first.provision, self.ranked, self.taken)
                if sentence is not None and sentence.score >= best_score * CITING_MIN_SHARE:
                    self.covered.insert(0, self.statement(sentence, "reference"))
        elif self.covered and verdict is not None and verdict.stated:
            # a provision of the context sends to the decisive one ("… nach Anlage 1"): the sending rule states
            # the case the named one serves, so its sentence naming it stands beside the verdict when it scores
            # near the best
            named = self.covered[0].provision
            citing = citing_provisions(self.context, named)
            sentence = citing_sentence(citing[0], named, self.ranked, self.taken) if citing else None
            if sentence is not None and sentence.score >= best_score * CITING_MIN_SHARE:
                if (item := self.statement(sentence, "reference")) is not None:
                    self.covered.insert(1, item)
        decisive = self.covered[0].provision if self.covered else self.ranked[0].provision
        opening = self.covered[0].sentences if self.covered else []
        by_provision: dict[int, list[Candidate]] = {}
        for candidate in self.ranked:
            by_provision.setdefault(id(candidate.provision), []).append(candidate)
        references = [target for target in reached_from(self.context.provisions, decisive, self.context.links)
                      if by_provision.get(id(target)) and says_link(opening, self.context.read.get(
                          ((decisive.doc, decisive.section), (target.doc, target.section))))]
        for target in references[:MAX_REFERENCES_COVERED]:
            # the target's rule is quoted already (it answers a part): it is the statement the chain brought, said
            # after the decisive one ("§ 5 QStrV → § 12 QStrG: „(1) Der Grenzwert …“"), not a further sentence of
            # the target (its under-18 exception) while the rule stood apart
            quoted = next((s for s in self.covered[1:] if s.provision is target and s.source is None
                           and s.covers == "part"), None)
            if quoted is not None:
                self.covered.remove(quoted)
                quoted.source = decisive
                self.covered.insert(1 + sum(1 for s in self.covered[1:] if s.covers == "reference"), quoted)
                continue
            free = [c for c in by_provision[id(target)] if id(c.sentence) not in self.taken]
            free = [c for c in free if c.features.get("cited_paragraph")] or free
            cited = self.statement(free[0], "reference", decisive) if free else None
            if cited is not None:
                cited.lead_worthy = free[0].score >= best_score * REFERENCE_MIN_SHARE
                self.covered.insert(1 + sum(1 for s in self.covered[1:] if s.covers == "reference"), cited)

    def additions(self, additions: list[str]) -> None:
        for addition in additions:
            holding = [c for c in self.ranked if id(c.sentence) not in self.taken and holds(addition, c)]
            if holding and (item := self.statement(holding[0], "addition")) is not None:
                self.covered.append(item)

    def own_tasks(self, tasks: list[AnswerTask] | tuple) -> None:
        """A task the researcher wrote: the best sentence of what it found, by its own words, in its section; one
        the lead already quotes is not its answer (the section would be empty)."""
        for index, task in enumerate(tasks):
            found = [c for c in self.ranked if task.own and c.sentence.chunk.chunk_id in task.chunk_ids
                     and index < len(c.task_terms) and c.task_terms[index] > 0 and id(c.sentence) not in self.taken]
            best = max(found, key=lambda c: (c.task_terms[index], c.score), default=None)
            if best is not None and (own := self.statement(best, "task")) is not None:
                own.task, own.lead_worthy = task, False
                self.covered.append(own)
                self._rule_behind(best, task)

    def _rule_behind(self, pointer: Candidate, task: AnswerTask) -> None:
        """A task's best sentence that points to another provision its search found ("… ist nach § 6 zu
        verfahren"): the rule it points to is quoted with it, its best sentence, said as the chain ("§ 5 → § 6"),
        so the task is answered by the rule and not only by the pointer to it."""
        targets = [p for p in reached_from(self.context.provisions, pointer.provision, self.context.links)
                   if p.chunk_ids & task.chunk_ids and pointer.provision.section
                   and p.section and _names_section(pointer.text, p.section)]
        for target in targets[:1]:
            free = [c for c in self.ranked if c.provision is target and id(c.sentence) not in self.taken]
            if free and (rule := self.statement(free[0], "task", pointer.provision)) is not None:
                rule.task, rule.lead_worthy = task, False
                self.covered.append(rule)


def select(context: AnswerContext, additions: list[str], cost: Callable[[Statement], int],
           lead_max_chars: int, answer_max_chars: int, tasks: list[AnswerTask] | tuple = ()) -> Selection:
    """Cover, then fill. `cost(statement)`: the characters the statement takes written out. `tasks`: the
    approved tasks; one the researcher wrote is covered by the best sentence of what it found, read by its own
    words."""
    ranked = context.candidates
    if not ranked:
        return Selection()
    cover = _Cover(context)
    cover.verdict()
    cover.parts()
    cover.chain()
    cover.additions(additions)
    # what the researcher added stands in the lead before the question's parts, after the verdict and its chain:
    # a short lead states the decisive provision and what was asked for explicitly
    added = [item for item in cover.covered if item.covers == "addition"]
    rest = [item for item in cover.covered if item.covers != "addition"]
    before = next((i for i, item in enumerate(rest) if i > 0 and item.covers == "part"), len(rest))
    cover.covered = rest[:before] + added + rest[before:]
    cover.own_tasks(tasks)
    selection = Selection(excerpts=context.excerpts, verdict=context.verdict)
    used = lead_used = 0  # characters of the whole answer, of its lead
    lead_open = True  # no statement the lead should hold had to stand below it for want of room
    for item in cover.covered:
        size = cost(item)
        if item.covers == "verdict" or not selection.lead or (item.lead_worthy and lead_used + size <= lead_max_chars):
            selection.lead.append(item)
            lead_used += size
        else:
            selection.body.append(item)
            lead_open = lead_open and not item.lead_worthy
        used += size
    # fill: the lead's room first (while no cover statement had to move below it), then the body's
    floor = ranked[0].score * FILL_MIN_SHARE
    chained = {id(item.provision) for item in cover.covered} | _entry_chain(context)
    unchained_room = answer_max_chars * UNCHAINED_FILL_SHARE  # characters left for provisions outside `chained`
    for candidate in ranked:
        if candidate.score < floor or used >= answer_max_chars:
            break
        if id(candidate.sentence) in cover.taken:
            continue
        outside = id(candidate.provision) not in chained
        whole = [s for s in candidate.provision.whole_statements([candidate.sentence]) if id(s) not in cover.taken]
        trial = Statement(candidate.provision, whole, "fill", None, candidate.score)
        size = cost(trial)
        if used + size > answer_max_chars or (outside and size > unchained_room):
            continue
        cover.taken.update(id(s) for s in whole)
        if outside:
            unchained_room -= size
        if lead_open and lead_used + size <= lead_max_chars:
            selection.lead.append(trial)
            lead_used += size
        else:
            selection.body.append(trial)
        used += size
    _complete_chains(context, selection, cover.taken, cost, answer_max_chars - used, floor)
    return selection


def _complete_chains(context: AnswerContext, selection: Selection, taken: set[int], cost: Callable[[Statement], int],
                     room: int, floor: float) -> None:
    """A part's statement that a reference reached stands with the sentence making that reference (the citing
    provision's sentence that names it, `citing_sentence`) when the answer quotes nothing of the citing provision
    and that sentence scores as high as the fill's `floor`: below the lead, before the fill, in place of the weakest
    fills when the answer is full. The reference is why the statement applies; the lead keeps its room."""
    quoted = {id(item.provision) for item in selection.statements()}
    for item in [s for s in selection.statements() if s.covers == "part"]:
        citing = citing_provisions(context, item.provision)
        if not citing or any(id(provision) in quoted for provision in citing):
            continue
        sentence = citing_sentence(citing[0], item.provision, context.candidates, taken)
        if sentence is None or sentence.score < floor:
            continue  # a sentence the fill would not take is not worth its room either
        whole = [s for s in citing[0].whole_statements([sentence.sentence]) if id(s) not in taken]
        chain = Statement(citing[0], whole, "reference", None, sentence.score, lead_worthy=False)
        size = cost(chain)
        fills = sorted((s for s in selection.body if s.covers == "fill"), key=lambda s: s.score)
        while room < size and fills:
            weakest = fills.pop(0)
            selection.body.remove(weakest)
            room += cost(weakest)
            taken.difference_update(id(s) for s in weakest.sentences)
        if room < size:
            continue
        first_fill = next((i for i, s in enumerate(selection.body) if s.covers == "fill"), len(selection.body))
        selection.body.insert(first_fill, chain)
        room -= size
        quoted.add(id(citing[0]))
        taken.update(id(s) for s in whole)


def _entry_chain(context: AnswerContext) -> set[int]:
    """The entry and the provisions reached from it by a followed reference (ids)."""
    if context.entry is None:
        return set()
    return {id(context.entry)} | {id(p) for p in reached_from(context.provisions, context.entry, context.links)}


def body_sections(selection: Selection, tasks: list[AnswerTask]) -> list[tuple[AnswerTask | None, list[Statement]]]:
    """The body's statements by the approved task that found them (the researcher's order), then those no task
    found; a provision's statements together, in reading order. A task that adds nothing has no section."""
    grouped: dict[str | None, list[Statement]] = {}
    for item in selection.body:
        owner = _owner(item, tasks)
        grouped.setdefault(owner.id if owner else None, []).append(item)
    out: list[tuple[AnswerTask | None, list[Statement]]] = []
    for task in [*tasks, None]:
        items = grouped.get(task.id if task else None)
        if not items:
            continue
        merged: dict[tuple[int, int], Statement] = {}
        for item in items:
            key = (id(item.provision), id(item.source))
            if key in merged:
                merged[key].sentences = sorted(merged[key].sentences + item.sentences, key=lambda s: s.order)
            else:
                merged[key] = Statement(item.provision, list(item.sentences), item.covers, item.source, item.score)
        out.append((task, list(merged.values())))
    return out

