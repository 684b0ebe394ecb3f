"""The answer's shape: the findings first, then one section per approved task, then the reference chain.

`plan_answer` (answer.py) chooses what the answer quotes for the question; this module lays it out the
way a researcher reads it:

1. **the opening** — the statements that carry the result: the decisive provision's best sentence, the
   sentences that carry what the question asks for, and the best sentence of what the decisive provision
   refers to (`opening_statements`);
2. **one section per approved task**, in the plan's order — the sentences of the provisions the task's
   own searches found, or, when it found none worth quoting, a "not found" that names what was searched.
   A task the researcher wrote or edited is read by its own words (`own_sentences`), so its section
   holds what it asked for even when the question's words rank other provisions first;
3. **the reference chain** — each provision reached by following a reference, said as "X verweist auf Y"
   with its sentences.

Every sentence is quoted once: a sentence in the opening is not repeated below, and a section whose
findings the opening already quotes says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from rabbithole_lab.reasoning.answer import AnswerPlan, Provision, Sentence
from rabbithole_lab.reasoning.base import AnswerTask

OPENING_STATEMENTS = 3  # the findings state at least the decisive provision and what it led to
OPENING_MAX = 5  # and at most this many statements: a short statement, not the answer again
SENTENCES_PER_PROVISION = 2  # of one provision in the findings
SENTENCES_PER_TASK = 3  # a task's own best sentences, when the plan quotes none of its provisions


@dataclass
class TaskSection:
    task: AnswerTask
    parts: list[tuple[Provision, list[Sentence]]] = field(default_factory=list)
    quoted_above: list[Provision] = field(default_factory=list)  # its provisions quoted elsewhere in the answer

    @property
    def found(self) -> bool:
        return bool(self.parts or self.quoted_above)


@dataclass
class ShapedAnswer:
    opening: list[tuple[Provision, Sentence]] = field(default_factory=list)
    decisive: Provision | None = None
    reached: list[Provision] = field(default_factory=list)  # what the decisive provision led to
    sections: list[TaskSection] = field(default_factory=list)
    chain: list[tuple[Provision, Provision, list[Sentence]]] = field(default_factory=list)
    rest: list[tuple[Provision, list[Sentence]]] = field(default_factory=list)  # found by no listed task


def opening_statements(plan: AnswerPlan, carries: Callable[[str], bool] = lambda _: False,
                       found: tuple[Provision, ...] = (), floor: float = 0.0) -> list[tuple[Provision, Sentence]]:
    """The decisive provision's best sentence; then, in the plan's order, the sentences that carry what the
    question asks for (`carries`: a figure for "how high", a period for "how long", an authority for "who"),
    at most OPENING_MAX and SENTENCES_PER_PROVISION of one provision; then, up to OPENING_STATEMENTS, the
    best sentence of each provision the decisive one led to, then of the others; then, while there is room,
    the best sentences (at least `floor`) of any provision the research `found` that carry what was asked:
    the findings state what the question asks for wherever the research found it, after what the plan quotes."""
    if not plan.parts:
        return []
    decisive, _, first = plan.parts[0]
    chosen = [(decisive, max(first, key=lambda s: s.score))]

    def take(provision: Provision, sentence: Sentence) -> None:
        if all(sentence is not held for _, held in chosen) and \
                sum(1 for p, _ in chosen if p is provision) < SENTENCES_PER_PROVISION:
            chosen.append((provision, sentence))

    for provision, _, sentences in plan.parts:
        for sentence in sorted(sentences, key=lambda s: -s.score):
            if len(chosen) < OPENING_MAX and carries(sentence.text):
                take(provision, sentence)
    ranked = sorted(plan.parts[1:], key=lambda part: (part[1] is not decisive, -max(s.score for s in part[2])))
    for provision, _, sentences in ranked:
        if len(chosen) >= OPENING_STATEMENTS:
            break
        if all(p is not provision for p, _ in chosen):
            take(provision, max(sentences, key=lambda s: s.score))
    order = {id(part[0]): index for index, part in enumerate(plan.parts)}
    chosen.sort(key=lambda item: (order[id(item[0])], item[1].order))
    beyond = sorted(((p, s) for p in found for s in p.sentences if s.score >= floor and carries(s.text)),
                    key=lambda item: -item[1].score)
    for provision, sentence in beyond:
        if len(chosen) >= OPENING_MAX:
            break
        take(provision, sentence)
    return chosen


def _owner(provision: Provision, tasks: list[AnswerTask]) -> AnswerTask | None:
    """The task that found most of the provision's passages (the first on a tie)."""
    ids = provision.chunk_ids
    counts = [(len(ids & task.chunk_ids), -index, task) for index, task in enumerate(tasks)]
    best = max(counts, key=lambda item: item[:2], default=None)
    return best[2] if best and best[0] else None


def names_provision(text: str, provision: Provision) -> bool:
    """The text names the provision: its section and its document's short name ("§ 12 QStrG")."""
    return " ".join(provision.label.split()).casefold() in " ".join(text.replace("\u00a0", " ").split()).casefold()


def excluded_provision(provision: Provision, exclusions: list[str]) -> bool:
    """An exclusion names the provision ("ohne § 13 QStrG")."""
    return bool(provision.section) and any(names_provision(case, provision) for case in exclusions)


def shape_answer(plan: AnswerPlan, provisions: list[Provision], tasks: list[AnswerTask],
                 own_sentences: Callable[[AnswerTask, list[Provision], set[int]],
                                         list[tuple[Provision, list[Sentence]]]],
                 opening: list[tuple[Provision, Sentence]] | None = None) -> ShapedAnswer:
    """The plan laid out as opening, task sections and chain. `own_sentences(task, provisions, quoted)` gives
    a task's best sentences of the given provisions by the task's own words, none of `quoted` (ids of the
    sentences the answer holds already), at most SENTENCES_PER_TASK.
    `opening`: the findings (`opening_statements`, with what else the caller states first); by default the
    plan's without a kind asked for."""
    shaped = ShapedAnswer(opening=opening_statements(plan) if opening is None else opening)
    if plan.parts:
        shaped.decisive = plan.parts[0][0]
        shaped.reached = [p for p, source, _ in plan.parts if source is shaped.decisive]
    opened = {id(sentence) for _, sentence in shaped.opening}
    opened_provisions = {id(provision) for provision, _ in shaped.opening}
    sections = {task.id: TaskSection(task) for task in tasks}
    quoted: set[int] = set(opened)

    def read_by_its_words(task: AnswerTask, found: list[Provision]) -> None:
        section = sections[task.id]
        for provision, sentences in own_sentences(task, found, quoted):
            fresh = [s for s in sentences if id(s) not in quoted]
            quoted.update(id(s) for s in fresh)
            if fresh:
                section.parts.append((provision, fresh))
            elif id(provision) in opened_provisions and provision not in section.quoted_above:
                section.quoted_above.append(provision)

    # a task the researcher wrote or edited takes its own best sentences first, wherever they were found
    for task in (task for task in tasks if task.own):
        read_by_its_words(task, [p for p in provisions if p.chunk_ids & task.chunk_ids])
    for provision, source, sentences in plan.parts:
        remaining = [s for s in sentences if id(s) not in quoted]
        quoted.update(id(s) for s in sentences)
        if source is not None:
            shaped.chain.append((source, provision, remaining))
            continue
        owner = _owner(provision, tasks)
        if owner is None:
            if remaining:
                shaped.rest.append((provision, remaining))
            continue
        section = sections[owner.id]
        if remaining:
            section.parts.append((provision, remaining))
        elif id(provision) in opened_provisions:
            section.quoted_above.append(provision)
    # a task the plan quotes nothing of is read by its own words: the provisions it names ("Was regelt
    # § 12 QStrG?"), else what it found, best first
    followed = {id(provision) for _, provision, _ in shaped.chain}
    for task in tasks:
        section = sections[task.id]
        named = [p for p in provisions if p.section and names_provision(task.task, p)]
        if named and not section.parts:
            section.quoted_above += [p for p in named if id(p) in opened_provisions or id(p) in followed]
            read_by_its_words(task, [p for p in named if id(p) not in opened_provisions and id(p) not in followed])
        elif not task.own:  # what the task found, beyond what the plan quotes for the question
            read_by_its_words(task, [p for p in provisions if p.chunk_ids & task.chunk_ids and id(p) not in followed])
    # a task whose findings the answer quotes elsewhere says where, instead of "not found"
    quoted_provisions = {id(p) for p in provisions if any(id(s) in quoted for s in p.sentences)}
    for task in tasks:
        section = sections[task.id]
        if not section.parts:
            section.quoted_above += [p for p in provisions if p.chunk_ids & task.chunk_ids
                                     and id(p) in quoted_provisions and p not in section.quoted_above]
    shaped.sections = [sections[task.id] for task in tasks]
    return shaped
