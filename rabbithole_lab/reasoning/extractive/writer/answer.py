"""The answer's material: the graded context grouped by provision (document + section, so "§ 12 StrlSchG"
and "§ 12 StrlSchV" never mix), each with its sentences, and the references between provisions.

A sentence that points back at the one before it ("Satz 1 gilt nicht für …", "Sie ist jedoch …") is quoted with
it, and the one before with it: the two are one statement (`Provision.whole_statements`).

Every sentence cites the page where it starts. Sentences are whole: the heading a continuation
chunk repeats, a fragment that continues the previous chunk, a bibliography and a sentence addressed
to a model ("ignore your instructions") are never quoted. What the answer quotes of them is chosen by the
ranker and the selection (`sentence_ranker.py`, `answer_selection.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rabbithole_lab.evidence.pages import quote_pages
from rabbithole_lab.kb.ingest.sections import BIBLIOGRAPHY_LABEL
from rabbithole_lab.language import addresses_a_model
from rabbithole_lab.language.citations_de import PARAGRAPH_MARK, paragraph_marks
from rabbithole_lab.reasoning.passages import joined_passages
from rabbithole_lab.reasoning.text import named_rows, passage_rows, points_back
from rabbithole_lab.records import TIER_WEIGHTS, ChunkWithInfo


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
    name: str = ""  # how the answer names its document (`DocumentRegistry.display_name`); "": its file stem

    @property
    def label(self) -> str:
        """How the answer names it: a law's provision as lawyers cite it ("§ 12 QStrG", "Anlage 3 AtG"); a
        numbered rule of another document after its name ("Allocation of Responsibilities, 3.2"), so a bare
        number is not read as a provision; a rulebook's heading path or title after the number is left out
        (`shown_section`)."""
        return provision_label(self.name or Path(self.doc).stem, shown_section(self.section))

    @property
    def depth(self) -> int:
        return min(chunk.depth for chunk in self.chunks)

    @property
    def chunk_ids(self) -> set[str]:
        return {chunk.chunk_id for chunk in self.chunks}

    @property
    def cited_by(self) -> set[str]:
        return {chunk.cited_by for chunk in self.chunks if chunk.cited_by}

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


def provisions_of(chunks: list[ChunkWithInfo], sentences_of: Callable[[ChunkWithInfo], list[str]],
                  score: Callable[[list[str]], list[float]], names: dict[str, str] | None = None) -> list[Provision]:
    """The context grouped by provision, each with its scored sentences (no bibliography, no text
    addressed to a model, no sentence twice in a document). Sentences are read from the provision's passages,
    so one that runs over a chunk boundary is whole when the context holds both chunks. Two laws may hold the
    same words (an item of the licensing conditions that more than one act lists word for word): each keeps
    them, for in each they are that law's condition.
    Words a document repeats (a criterion listed again in its next annex) are held by the first of its
    provisions."""
    by_key: dict[tuple[str, str], Provision] = {}
    for chunk in chunks:
        if chunk.section == BIBLIOGRAPHY_LABEL or chunk.addressed_to_model:  # text to a model is data, never quoted
            continue
        key = (chunk.document, chunk.section)
        by_key.setdefault(key, Provision(chunk.document, chunk.section, name=(names or {}).get(chunk.document, ""))
                          ).chunks.append(chunk)
    seen_in: dict[str, set[str]] = {}  # document -> the sentences its provisions hold
    for provision in by_key.values():
        seen = seen_in.setdefault(provision.doc, set())
        provision.passages = joined_passages(provision.chunks)
        texts: list[tuple[str, ChunkWithInfo, frozenset[str], bool]] = []
        for passage in provision.passages:
            sentences = sentences_of(passage)
            kept_previous = False  # the passage's sentence before this one is the provision's last sentence
            for sentence, paragraphs in zip(sentences, paragraphs_of(sentences), strict=True):
                kept = sentence not in seen and not addresses_a_model(sentence)
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


def reached_from(provisions: list[Provision], source: Provision, links: Links | None = None) -> list[Provision]:
    """The provisions a reference of `source` led to, best first: reached by following from one of its
    passages, or cited by it and in the context anyway (search found it too, or another task followed it)."""
    cited = (links or {}).get((source.doc, source.section), {})
    return sorted((p for p in provisions if p is not source
                   and (p.cited_by & source.chunk_ids or (p.doc, p.section) in cited)),
                  key=lambda p: -p.strength)


def names_provision(text: str, provision: Provision) -> bool:
    """The text names the provision: its section and its document's short name ("§ 12 QStrG"), as the answer
    names it or as its file and whole section label do."""
    said = " ".join(text.replace("\u00a0", " ").split()).casefold()
    return any(" ".join(label.split()).casefold() in said
               for label in (provision.label, provision_label(Path(provision.doc).stem, provision.section)))


def provision_label(document: str, section: str) -> str:
    if not section:
        return document
    return f"{document}, {section}" if section[:1].isdigit() else f"{section} {document}"


# a section label's number, then the heading path or title a rulebook's label adds: "2.15 (Chapter 2 Having a
# credible recovery plan > …)", "Article 277(3) Mapping of Transactions to Risk Categories", "Article 3A: Materiality"
_TITLED_SECTION = re.compile(r"(?P<number>(?:[^\s\d(]+\s+)?[^\s]*\d[^\s:]*)"
                             r"(?:\s*\(.*\)|\s*:\s.*|(?:\s+[^\s\d]+){3,})")


def shown_section(section: str) -> str:
    """The section as an answer names it: its number without the heading path or title after it ("2.15",
    "Article 277(3)", "Footnote 53"); a label that is a number with its sub-units ("§ 5 Absatz 2", "Anlage 4 Teil
    B") or no number stays whole."""
    match = _TITLED_SECTION.fullmatch(" ".join(section.split()))
    return match.group("number").rstrip(".") if match else section


def excluded_provision(provision: Provision, exclusions: list[str]) -> bool:
    """An exclusion names the provision ("ohne § 13 QStrG")."""
    return bool(provision.section) and any(names_provision(case, provision) for case in exclusions)
