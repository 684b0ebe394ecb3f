"""Reading an answer the way a researcher does, for tests that assert what it says, not how it is worded.

An answer has a lead (its lines before the first section heading), provisions it names ("§ 5 QStrV"),
quotations with citations ([QStrV.pdf, S. 2]) and framing text around them. Tests ask: which provision does
the lead name first, does the lead quote the sentence with the figure, is a chain from one provision to
another stated, what language is the framing in. A change of wording keeps these true; a change of
behaviour does not.
"""

from __future__ import annotations

import re

from rabbithole_lab.language.detection import detect_language
from rabbithole_lab.reasoning.checks.quality import statements

PROVISION = re.compile(r"§§?\s*\d+[a-z]?(?:\s+(?:Abs\.|Absatz)\s*\d+)?\s+(?P<book>[A-ZÄÖÜ][\wÄÖÜäöüß-]*)")
QUOTED = re.compile(r"„[^“]*“|\"[^\"]*\"|“[^”]*”")
CITATION = re.compile(r"\[[^\]]+\.(?:pdf|md|txt), (?:S\.|p\.) \d+\]")
HEADING = re.compile(r"^\*\*[^*]+\*\*\s*$")


def lead(answer: str) -> str:
    """The answer's lines before its first section heading (a line that is only bold text, after the first)."""
    lines = answer.splitlines()
    end = next((i for i, line in enumerate(lines) if i > 0 and HEADING.match(line)), len(lines))
    return "\n".join(lines[:end]).strip()


def framing(text: str) -> str:
    """The answer's own words: quotations and citations taken out."""
    return CITATION.sub(" ", QUOTED.sub(" ", text.replace("*", "")))


def provisions_named(text: str) -> list[str]:
    """Provisions the framing names, in order, each once ("§ 5 QStrV")."""
    named: list[str] = []
    for match in PROVISION.finditer(framing(text)):
        label = re.sub(r"\s+(?:Abs\.|Absatz)\s*\d+", "", " ".join(match.group(0).split()))
        if label not in named:
            named.append(label)
    return named


def quotes_of(text: str) -> list:
    """The quotations with their citations ([(doc, page)]), as the quality check reads them."""
    return list(statements(text))


def quotes_holding(text: str, words: str) -> list:
    return [s for s in quotes_of(text) if words in " ".join(s.quote.split())]


def states_chain(text: str, citing: str, cited: str) -> bool:
    """Some line of the answer's own words names `citing` and then `cited` (a reference chain stated)."""
    for line in text.splitlines():
        named = provisions_named(line)
        if citing in named and cited in named and named.index(citing) < named.index(cited):
            return True
    return False


def framing_language(text: str) -> str:
    words = framing(text)
    words = PROVISION.sub(" ", words)
    return detect_language(words)
