"""How much each of the question's terms tells the sentences of one context apart.

Inverse document frequency over the context's own sentences: a term in nearly every sentence of the
context ("Strahlenschutz" in a context about radiation protection) says little about which sentence
answers; a term in two of them ("Inkorporation") says a lot; a question term that no sentence holds
cannot tell them apart at all and weighs nothing. Terms are the stemmed, compound-split content words
BM25 compares, in both languages we serve, so an English question's glossary terms meet German text.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from rabbithole_lab.kb.retrieval.lexical import content_terms

TERM_CACHE_SIZE = 50_000  # sentences; a synthesis context holds a few hundred


@lru_cache(maxsize=TERM_CACHE_SIZE)
def sentence_terms(text: str) -> frozenset[str]:
    """The content terms of a text, stemmed as German and as English."""
    return frozenset(content_terms(text, "de") | content_terms(text, "en"))


class TermWeights:
    """Inverse document frequency of each term over the sentences of one context."""

    def __init__(self, sentences: Iterable[str]):
        frequency: Counter[str] = Counter()
        count = 0
        for sentence in dict.fromkeys(sentences):
            count += 1
            frequency.update(sentence_terms(sentence))
        self._weight = {term: math.log(1 + count / in_sentences) for term, in_sentences in frequency.items()}

    def weight(self, term: str) -> float:
        return self._weight.get(term, 0.0)

    def overlap(self, question_terms: frozenset[str], text: str) -> float:
        """The share of the question's term weight that `text` carries (0..1)."""
        total = sum(self.weight(term) for term in question_terms)
        if not total:
            return 0.0
        return sum(self.weight(term) for term in question_terms & sentence_terms(text)) / total
