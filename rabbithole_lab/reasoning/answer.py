"""The extractive answer: the decisive provision first, then what each followed provision adds.

No model writes the answer; it is built from verbatim sentences of the graded context, grouped by
provision (document + section, so "§ 12 StrlSchG" and "§ 12 StrlSchV" never mix):

1. the decisive provision — the question's best entry: the first-stage provision whose sentences
   carry most of the question's terms and figures — with those sentences;
2. each provision reached by following a reference from a provision already in the answer, said as a
   chain ("§ 55 StrlSchV verweist auf § 78 StrlSchG: „…“"); what the decisive provision cites is quoted
   even when it does not repeat the question's words;
3. while the answer has room, the best remaining sentences of the provisions search found, grouped
   by provision.

Where the question asks for a kind of statement (a figure, a period, a body: `asked_kinds.py`), the sentences
that carry it are quoted first — of each provision and of the remaining room — as long as they are relevant
at all: "Wie lange …?" is answered by the sentence with the period, not by the provision's most similar one.

A sentence that points back at the one before it ("Satz 1 gilt nicht für …", "Sie ist jedoch …") is quoted with
it, and the one before with it: the two are one statement.

Every sentence cites the page where it starts. Sentences are whole: the heading a continuation
chunk repeats, a fragment that continues the previous chunk, a bibliography and a sentence addressed
to a model ("ignore your instructions") are never quoted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.kb.sections import BIBLIOGRAPHY_LABEL
from rabbithole_lab.pages import quote_pages
from rabbithole_lab.rabbithole.citation_grammar import PARAGRAPH_MARK, paragraph_marks
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.reasoning.text import named_rows, passage_rows, points_back
from rabbithole_lab.records import TIER_WEIGHTS, ChunkWithInfo

# a sentence that speaks to a model instead of stating the law: document text is data, never instructions
_ADDRESSED_TO_A_MODEL = re.compile(
    r"\b(?:ignor\w*\s+(?:all\s+|alle\s+)?(?:previous|prior|vorherigen|bisherigen)|system\s*prompt|"
    r"(?:you|du|sie)\s+(?:are|bist|sind)\s+(?:now|jetzt|nun)\b|^\s*(?:SYSTEM|ASSISTANT|USER)\s*:|"
    r"output\s+(?:only\s+)?[\"'„“]?[A-Z]{4,})", re.IGNORECASE | re.MULTILINE)

OPENING_SENTENCES = 4  # of the decisive provision: what it says on the question, not only its best line
SENTENCES_PER_LINK = 2  # of each provision reached by a reference
MAX_SENTENCES = 10


@dataclass
class Sentence:
    text: str
    chunk: ChunkWithInfo
    score: float
    order: int  # reading order inside the provision
    paragraphs: frozenset[str] = frozenset()  # the numbered paragraphs ("(5)") it stands in, where known
    named: bool = False  # a table's row the question names by its label (`text.named_rows`)
    continues: bool = False  # it points back at the provision's sentence before it, its neighbour in the passage

    @property
    def page(self) -> int:
        return quote_pages(self.chunk.chunk_text, self.chunk.page_map, self.text, self.chunk.page)[0]


@dataclass
class Provision:
    doc: str
    section: str
    chunks: list[ChunkWithInfo] = field(default_factory=list)
    passages: list[ChunkWithInfo] = field(default_factory=list)  # its chunks, consecutive ones joined
    sentences: list[Sentence] = field(default_factory=list)

    @property
    def label(self) -> str:
        stem = Path(self.doc).stem
        return f"{self.section} {stem}".strip() if self.section else stem

    @property
    def depth(self) -> int:
        return min(chunk.depth for chunk in self.chunks)

    @property
    def chunk_ids(self) -> set[str]:
        return {chunk.chunk_id for chunk in self.chunks}

    @property
    def cited_by(self) -> set[str]:
        return {chunk.cited_by for chunk in self.chunks if chunk.cited_by}

    def best(self, count: int, floor: float = 0.0, asked: Callable[[str], bool | set[str]] | None = None,
             cited_paragraphs: set[str] | frozenset[str] = frozenset()) -> list[Sentence]:
        """The `count` best sentences of at least `floor`, in reading order: those of the paragraphs a reference
        names first ("§ 9g Absatz 5" is answered by paragraph (5)), then a table's row the question names, then
        those that state what the question asks for (`asked`)."""
        eligible = [s for s in self.sentences if s.score >= floor]
        carried = {id(s): asked(s.text) if asked else False for s in eligible}
        ranked = sorted(eligible, key=lambda s: (not s.paragraphs & cited_paragraphs, not s.named,
                                                 not carried[id(s)], -s.score))
        # a question asking for several kinds ("when is it required, and how quickly?": a condition and a
        # deadline) is answered by a sentence of each before a second sentence of one kind
        chosen: list[Sentence] = []
        stated: set = set()
        for sentence in ranked:
            kinds = carried[id(sentence)]
            adds = set(kinds) - stated if isinstance(kinds, (set, frozenset)) else set()
            if len(chosen) < count and (sentence.paragraphs & cited_paragraphs or sentence.named or adds):
                chosen.append(sentence)
                stated |= adds
        chosen += [s for s in ranked if all(s is not held for held in chosen)][: count - len(chosen)]
        return sorted(chosen, key=lambda s: s.order)

    def whole_statements(self, chosen: list[Sentence]) -> list[Sentence]:
        """The chosen sentences in reading order, each with the neighbour it forms one statement with: the
        sentence it points back at, and the one that points back at it (`text.points_back`). A rule is not
        quoted without the exception its next sentence makes ("Satz 1 gilt nicht für …"), nor a sentence whose
        subject is only in the one before ("Sie ist jedoch auf die geänderten Bauteile zu beschränken.")."""
        at = {sentence.order: sentence for sentence in self.sentences}
        whole = {id(sentence): sentence for sentence in chosen}
        for sentence in chosen:
            before, after = at.get(sentence.order - 1), at.get(sentence.order + 1)
            if sentence.continues and before is not None:
                whole[id(before)] = before
            if after is not None and after.continues:
                whole[id(after)] = after
        return sorted(whole.values(), key=lambda s: s.order)

    @property
    def strength(self) -> float:
        return max((s.score for s in self.sentences), default=0.0)


def name_rows(provisions: list[Provision], question: str) -> None:
    """Mark the table rows the question names by label (`text.named_rows`), per provision (one table's rows
    are compared with each other), and rank each as the provision's best sentence: the row is the answer
    to the question that names it, however little else of the question it repeats."""
    for provision in provisions:
        rows = {row for passage in provision.passages for row in passage_rows(passage.chunk_text, passage.heading)}
        named = named_rows([s.text for s in provision.sentences if s.text in rows], question, provision.section)
        for sentence in provision.sentences:
            if sentence.text in named:
                sentence.named = True
                sentence.score = max(sentence.score, provision.strength)


def paragraphs_of(sentences: list[str]) -> list[frozenset[str]]:
    """The numbered paragraphs each sentence of a passage stands in: a sentence opening with "(5)" starts
    paragraph 5 and the sentences after it stay in it. A passage that starts inside a paragraph does not say
    which one: its sentences before the first number stand in none known."""
    current: frozenset[str] = frozenset()
    found: list[frozenset[str]] = []
    for sentence in sentences:
        marks = paragraph_marks(sentence)
        opens = PARAGRAPH_MARK.match(sentence)
        found.append(frozenset(marks) | (frozenset() if opens else current))
        if marks:
            current = frozenset(marks[-1:])
    return found


def addressed_to_a_model(sentence: str) -> bool:
    return bool(_ADDRESSED_TO_A_MODEL.search(sentence))


def provisions_of(chunks: list[ChunkWithInfo], sentences_of: Callable[[ChunkWithInfo], list[str]],
                  score: Callable[[list[str]], list[float]]) -> list[Provision]:
    """The context grouped by provision, each with its scored sentences (no bibliography, no text
    addressed to a model, no sentence twice in a document). Sentences are read from the provision's passages,
    so one that runs over a chunk boundary is whole when the context holds both chunks. Two laws may hold the
    same words (an item of the licensing conditions that more than one act lists word for word): each keeps
    them, for in each they are that law's condition.
    Words a document repeats (a criterion listed again in its next annex) are held by the first of its
    provisions."""
    by_key: dict[tuple[str, str], Provision] = {}
    for chunk in chunks:
        if chunk.section == BIBLIOGRAPHY_LABEL:
            continue
        key = (chunk.document, chunk.section)
        by_key.setdefault(key, Provision(chunk.document, chunk.section)).chunks.append(chunk)
    seen_in: dict[str, set[str]] = {}  # document -> the sentences its provisions hold
    for provision in by_key.values():
        seen = seen_in.setdefault(provision.doc, set())
        provision.passages = joined_passages(provision.chunks)
        texts: list[tuple[str, ChunkWithInfo, frozenset[str], bool]] = []
        for passage in provision.passages:
            sentences = sentences_of(passage)
            kept_previous = False  # the passage's sentence before this one is the provision's last sentence
            for sentence, paragraphs in zip(sentences, paragraphs_of(sentences), strict=True):
                kept = sentence not in seen and not addressed_to_a_model(sentence)
                if kept:
                    seen.add(sentence)
                    texts.append((sentence, passage, paragraphs, kept_previous and points_back(sentence)))
                kept_previous = kept
        scores = score([text for text, _, _, _ in texts]) if texts else []
        weight = {id(passage): TIER_WEIGHTS.get(passage.tier, 1.0) for passage in provision.passages}
        provision.sentences = [Sentence(text, chunk, scores[i] * (0.5 + 0.5 * weight[id(chunk)]), i, paragraphs,
                                        continues=continues)
                               for i, (text, chunk, paragraphs, continues) in enumerate(texts)]
    return [p for p in by_key.values() if p.sentences]


@dataclass
class AnswerPlan:
    """What the answer says, in order: (provision, the provision it was reached from, its sentences)."""

    parts: list[tuple[Provision, Provision | None, list[Sentence]]] = field(default_factory=list)
    # sentences quoted only to make a chosen one whole (`Provision.whole_statements`): they take no room
    companions: set[int] = field(default_factory=set)

    def sentences(self) -> list[Sentence]:
        return [sentence for _, _, sentences in self.parts for sentence in sentences]

    def statements(self) -> int:
        """How many sentences were chosen: the room the answer's sentences take."""
        return sum(1 for sentence in self.sentences() if id(sentence) not in self.companions)

    def whole(self, provision: Provision, chosen: list[Sentence], taken: set[int] = frozenset()) -> list[Sentence]:
        """The chosen sentences as whole statements (`Provision.whole_statements`), without those in `taken`; what
        was added to make them whole is a companion."""
        statements = [s for s in provision.whole_statements(chosen) if id(s) not in taken]
        self.companions |= {id(s) for s in statements} - {id(s) for s in chosen}
        return statements


def entry_provisions(provisions: list[Provision], relevant_below: float) -> list[Provision]:
    """The provisions search found (not reached by following), best first; the first is the decisive one."""
    useful = [p for p in provisions if p.strength >= relevant_below]
    entries = sorted((p for p in useful if p.depth == 0), key=lambda p: -p.strength)
    return entries or sorted(useful, key=lambda p: -p.strength)


Key = tuple[str, str]  # (doc, section)
Links = dict[Key, dict[Key, set[str]]]  # citing provision -> the provisions it cites -> the paragraphs it names


def links_of(chains: list[dict]) -> Links:
    """Which provision cites which, and which of its paragraphs ("§ 9g Absatz 5"; none: all of it), from the
    references between provisions of the context."""
    links: Links = {}
    for chain in chains:
        cited = links.setdefault(tuple(chain["citing"]), {})
        for doc, section in chain["cited"]:
            cited.setdefault((doc, section), set())
        for doc, section, paragraphs in chain.get("paragraphs", []):
            cited.setdefault((doc, section), set()).update(paragraphs)
    return links


Phrases = dict[tuple[Key, Key], set[str]]  # (citing, cited) -> how the citing text names it ("Anlage 4")


def read_links(chains: list[dict]) -> Phrases:
    """The links only read in a passage's text (no reference recorded by following), each with the words that
    make it: such a link is the evidence only where the answer quotes the sentence that says them."""
    recorded = {(tuple(chain["citing"]), tuple(cited)) for chain in chains if chain.get("recorded")
                or not chain.get("phrases") for cited in chain["cited"]}
    phrases: Phrases = {}
    for chain in chains:
        for cited in chain["cited"]:
            pair = (tuple(chain["citing"]), tuple(cited))
            if chain.get("phrases") and pair not in recorded:
                phrases.setdefault(pair, set()).update(chain["phrases"])
    return phrases


def _says(sentences: list[Sentence], phrases: set[str] | None) -> bool:
    if phrases is None:
        return True
    quoted = [" ".join(sentence.text.split()) for sentence in sentences]
    return any(" ".join(phrase.split()) in text for phrase in phrases for text in quoted)


def reached_from(provisions: list[Provision], source: Provision, links: Links | None = None) -> list[Provision]:
    """The provisions a reference of `source` led to, best first: reached by following from one of its
    passages, or cited by it and in the context anyway (search found it too, or another task followed it)."""
    cited = (links or {}).get((source.doc, source.section), {})
    return sorted((p for p in provisions if p is not source
                   and (p.cited_by & source.chunk_ids or (p.doc, p.section) in cited)),
                  key=lambda p: -p.strength)


def plan_answer(provisions: list[Provision], relevant_below: float, max_sentences: int = MAX_SENTENCES,
                links: Links | None = None, asked: Callable[[str], bool | set[str]] | None = None,
                read: Phrases | None = None) -> AnswerPlan:
    """Decisive provision, then the chains out of the provisions in the answer, then further provisions.
    `asked(sentence)`: the sentence states what the question asks for; such sentences are quoted first.
    `read`: links only read in the citing text (`read_links`), followed where a quoted sentence makes them."""
    plan = AnswerPlan()
    useful = [p for p in provisions if p.strength >= relevant_below]
    entries = entry_provisions(provisions, relevant_below)
    if not entries:
        return plan
    used: set[int] = set()
    # id(provision reached by a reference) -> the paragraphs the reference names, and the floor its sentences meet
    named_in: dict[int, tuple[set[str], float]] = {}

    def asked_first(sentence: Sentence) -> tuple[bool, float]:
        """Where the room is short: the sentences that say what is asked, then the best."""
        return not (asked and asked(sentence.text)), -sentence.score

    def add(provision: Provision, source: Provision | None, count: int, floor: float = relevant_below,
            cited_paragraphs: set[str] | frozenset[str] = frozenset()) -> None:
        room = max_sentences - plan.statements()
        # a provision is added once, so none of its sentences is in the plan yet
        picked = plan.whole(provision, provision.best(min(count, room), floor, asked, cited_paragraphs))
        if picked:
            plan.parts.append((provision, source, picked))
            used.add(id(provision))

    decisive = entries[0]
    add(decisive, None, OPENING_SENTENCES)
    # follow the chains: a provision whose chunk was reached from a chunk already in the answer. What the
    # decisive provision refers to is quoted whatever words it uses: the reference is the evidence ("§ 55
    # StrlSchV verweist auf § 78 StrlSchG" — the limit is in § 78, which need not repeat the question's
    # terms); further down the chain a provision must carry the question's terms itself.
    index = 0
    while index < len(plan.parts) and plan.statements() < max_sentences:
        source, _, quoted = plan.parts[index]
        cited_by_decisive = source is decisive
        reached = [p for p in reached_from(provisions if cited_by_decisive else useful, source, links)
                   if id(p) not in used and (p.cited_by & source.chunk_ids or _says(
                       quoted, (read or {}).get(((source.doc, source.section), (p.doc, p.section)))))]
        for provision in reached:
            if plan.statements() >= max_sentences:
                break
            named = (links or {}).get((source.doc, source.section), {}).get((provision.doc, provision.section), set())
            floor = 0.0 if cited_by_decisive else relevant_below
            add(provision, source, SENTENCES_PER_LINK, floor, named)
            named_in[id(provision)] = (named, floor)
        index += 1
    # a reference naming a paragraph ("die Voraussetzungen des § 7 Abs. 2") means all of it, and a long
    # enumeration quoted item by item is still that one paragraph: once every reference has its sentences,
    # the room left completes the paragraphs they name
    taken = {id(sentence) for sentence in plan.sentences()}
    for position, (provision, source, sentences) in enumerate(plan.parts):
        named, floor = named_in.get(id(provision), (set(), 0.0))
        room = max(0, max_sentences - plan.statements())
        rest_of_paragraph = sorted((s for s in provision.sentences
                                    if s.paragraphs & named and s.score >= floor and id(s) not in taken),
                                   key=asked_first)[:room]
        if rest_of_paragraph:
            added = plan.whole(provision, rest_of_paragraph, taken)
            taken |= {id(s) for s in added}
            plan.parts[position] = (provision, source, sorted(sentences + added, key=lambda s: s.order))
    # the rest of the room: the best remaining sentences of the provisions search found, by provision
    rest = sorted((s for p in entries for s in p.sentences if id(s) not in taken and s.score >= relevant_below),
                  key=asked_first)
    rest = rest[: max(0, max_sentences - plan.statements())]
    owner = {id(s): p for p in entries for s in p.sentences}
    for provision in entries:
        picked = plan.whole(provision, [s for s in rest if owner[id(s)] is provision], taken)
        if not picked:
            continue
        index = next((i for i, part in enumerate(plan.parts) if part[0] is provision), None)
        if index is None:
            plan.parts.append((provision, None, picked))
        else:  # more of a provision already quoted joins its paragraph
            provision_, source, sentences = plan.parts[index]
            plan.parts[index] = (provision_, source, sorted(sentences + picked, key=lambda s: s.order))
    return plan
