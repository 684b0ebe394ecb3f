"""Language knowledge, defined once per language (`de.py`, `en.py`), and the units figures are stated in
(`units.tsv`, with each domain's units in a file of its own: `units_radiation.tsv`).

A knowledge base adds the units of its own domain in `<kb>/.rabbithole-units.tsv` (same columns as
`units.tsv`; `extend_units`), so a figure in its unit counts as an amount like "20 Millisievert" does, and
its glossary in `<kb>/.rabbithole-glossary.tsv` (`bridge.py`). One code names a language in every layer
("de", "en"); `profile(code)` is its module.
Everything here is read by the reasoning through the functions below; no other module lists words of a
language or units.
"""

from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType

from rabbithole_lab.language import de, en

logger = logging.getLogger(__name__)

LANGUAGES: dict[str, ModuleType] = {"de": de, "en": en}
HERE = Path(__file__).parent
UNIT_FILES = (HERE / "units.tsv", HERE / "units_radiation.tsv")
KB_UNITS_FILE = ".rabbithole-units.tsv"
SI_PREFIXES = ("Milli", "Mikro", "Micro", "Kilo", "Mega", "Giga", "Tera")
KINDS = ("amount", "time")


@dataclass(frozen=True)
class Unit:
    name: str
    kind: str  # "amount" or "time"
    prefixed: bool = False  # takes the metric prefixes in words ("Millisievert")

    def spellings(self) -> list[str]:
        forms = [self.name]
        if self.prefixed:
            base = self.name.lower()
            forms += [base] + [prefix + base for prefix in SI_PREFIXES]
            forms += [prefix.lower() + base for prefix in SI_PREFIXES]
        return forms


_units: list[Unit] = []
_lock = threading.Lock()


def read_units(path: Path) -> list[Unit]:
    """The units of a file: "unit<TAB>kind[<TAB>si]" per line, "#" comments. A malformed line is an error that
    names the file and line."""
    units = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [cell.strip() for cell in line.split("\t")]
        if len(cells) < 2 or cells[1] not in KINDS or (len(cells) > 2 and cells[2] not in ("", "si")):
            raise ValueError(f"{path}:{number}: expected 'unit<TAB>amount|time[<TAB>si]', got {line!r}")
        units.append(Unit(cells[0], cells[1], len(cells) > 2 and cells[2] == "si"))
    return units


def units() -> list[Unit]:
    with _lock:
        if not _units:
            for path in UNIT_FILES:
                _units.extend(read_units(path))
        return list(_units)


def extend_units(kb_dir: Path | None) -> int:
    """Add the knowledge base's own units (`<kb>/.rabbithole-units.tsv`), once; how many were new."""
    path = Path(kb_dir) / KB_UNITS_FILE if kb_dir else None
    if path is None or not path.is_file():
        return 0
    known = {unit.name for unit in units()}
    fresh = [unit for unit in read_units(path) if unit.name not in known]
    if fresh:
        with _lock:
            _units.extend(fresh)
        figure_pattern.cache_clear()
        stated_patterns.cache_clear()
        logger.info("Units of the knowledge base: %s", ", ".join(unit.name for unit in fresh))
    return len(fresh)


def profile(code: str) -> ModuleType:
    """The language profile of `code` ("de" or "en"), the one language code of every layer; another code is an
    error that names the ones served."""
    try:
        return LANGUAGES[code]
    except KeyError:
        raise ValueError(f"no language profile for {code!r}: one of {', '.join(LANGUAGES)}") from None


def code_of_stemmer(name: str) -> str:
    """The code of the language whose Snowball stemmer is `name` ("german" -> "de"): what an index stored before
    it kept codes."""
    return next((code for code, module in LANGUAGES.items() if module.SNOWBALL_STEMMER == name), name)


def extend_from_kb(kb_dir: Path | None) -> None:
    """Read what a knowledge base says of its own domain: its units (`extend_units`) and its glossary
    (`bridge.extend_glossary`); each file is optional, a malformed one an error naming its line."""
    from rabbithole_lab.language.bridge import extend_glossary

    extend_units(kb_dir)
    extend_glossary(kb_dir)


def _alternatives(words: list[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


def words_of(name: str) -> list[str]:
    """Every language's words for `name`, in the order the languages are listed (German first)."""
    return [item for module in LANGUAGES.values() for item in getattr(module, name)]


def alternation(name: str) -> str:
    """Every language's words for `name` as one regular-expression alternation, German first (not grouped)."""
    return "|".join(words_of(name))


@lru_cache(maxsize=8)
def figure_pattern(kinds: tuple[str, ...] = KINDS) -> re.Pattern:
    """A figure with its unit ("20 Millisievert", "zehn Jahre", "500 Millionen Euro", "12 %"), of the given
    kinds: a number in digits (or, for periods, in words), its scale in words between them."""
    spelled = [re.escape(form) for unit in units() if unit.kind in kinds for form in unit.spellings()]
    scale = _alternatives(words_of("SCALE_WORDS"))
    digits = rf"\d[\d.,]*\s*(?:(?:{scale})\s+)?(?:{_alternatives(spelled)})(?!\w)"
    if "time" not in kinds:
        return re.compile(digits)
    periods = [re.escape(form) for unit in units() if unit.kind == "time" for form in unit.spellings()]
    words = rf"\b(?:{_alternatives(words_of('NUMBER_WORDS'))})\s+(?:(?:{scale})\s+)?(?:{_alternatives(periods)})\b"
    return re.compile(f"{digits}|{words}")


def interrogatives() -> str:
    return _alternatives(words_of("INTERROGATIVES"))


def prepositions() -> str:
    return _alternatives(words_of("PREPOSITIONS"))


def conjunctions() -> str:
    return _alternatives(words_of("CONJUNCTIONS"))


def case_opening() -> str:
    """A word opening a clause that states the question's case instead of asking ("When a firm …", "Wenn …")."""
    return rf"(?:{_alternatives(words_of('CASE_OPENINGS'))})\b"


def question_opening() -> str:
    """A question word, with a preposition before it ("bis wann", "unter welchen", "to whom"): the pattern
    that opens a question part and an asking phrase."""
    return rf"(?:(?:{prepositions()})\s+)?(?:{interrogatives()})\b"


@lru_cache(maxsize=1)
def question_stop_words() -> frozenset[str]:
    """Words of a question that say nothing of its subject, in every language (a question may mix them)."""
    return frozenset().union(*(module.QUESTION_STOP_WORDS for module in LANGUAGES.values()))


@lru_cache(maxsize=1)
def dialogue_filler_words() -> frozenset[str]:
    """Words of a question or a reply that name no aspect, in every language: the question's stop words, the
    dialogue's fillers, and the function words of each language (bm25s's stop-word lists)."""
    from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_GERMAN

    own = (word for module in LANGUAGES.values() for word in module.DIALOGUE_FILLER_WORDS)
    return question_stop_words() | frozenset(own) | frozenset(STOPWORDS_EN) | frozenset(STOPWORDS_GERMAN)


def is_term_word(word: str, language: str) -> bool:
    """The word can name a subject in `language` (German: a noun or a figure; English: no adverb); a word
    of a language without a profile is taken as it is."""
    module = LANGUAGES.get(language)
    return module.is_term_word(word) if module else True


@lru_cache(maxsize=1)
def asked_patterns() -> dict[str, re.Pattern]:
    """What a question asks for, by its words, in every language: kind -> pattern."""
    kinds = dict.fromkeys(kind for module in LANGUAGES.values() for kind in module.ASKED)
    return {kind: re.compile(r"\b(?:" + "|".join(item for module in LANGUAGES.values()
                                                 for item in module.ASKED.get(kind, [])) + ")", re.IGNORECASE)
            for kind in kinds}


@lru_cache(maxsize=1)
def stated_patterns() -> dict[str, re.Pattern]:
    """What a sentence states, in every language: an amount (a figure with an amount's unit), a deadline (a
    period, a date, a deadline's word), a frequency, a body, a condition."""
    months = _alternatives(words_of("MONTHS"))
    dates = [r"\b\d{1,2}\.\s?\d{1,2}\.\s?\d{4}\b", rf"\b\d{{1,2}}\.\s+(?:{months})\s+\d{{4}}\b"]
    out = {"amount": figure_pattern(("amount",))}
    for kind in ("deadline", "frequency", "body", "condition"):
        fragments = [item for module in LANGUAGES.values() for item in module.STATES.get(kind, [])]
        if kind == "deadline":
            fragments = [figure_pattern(("time",)).pattern, *fragments, *dates]
        out[kind] = re.compile("|".join(fragments))
    return out


@lru_cache(maxsize=1)
def points_back_pattern() -> re.Pattern:
    return re.compile(r"^(?:" + "|".join(words_of("POINTS_BACK")) + ")")


def singular_forms(word: str) -> list[str]:
    """The singulars a word may be the irregular plural of, in every language ("dosen" -> "dosis", "dosum"):
    candidates to look up, not words; the word itself is not among them."""
    lowered = word.lower()
    return [lowered[: -len(plural)] + singular for plural, singular in words_of("IRREGULAR_PLURALS")
            if lowered.endswith(plural) and len(lowered) - len(plural) >= 3]


@lru_cache(maxsize=1)
def _definition_patterns() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    heading = re.compile(r"(?:^|\W)(?:" + "|".join(words_of("DEFINITION_HEADINGS")) + ")", re.IGNORECASE)
    return heading, re.compile("|".join(words_of("DEFINES"))), re.compile("|".join(words_of("ASKS_DEFINITION")),
                                                                       re.IGNORECASE)


def is_definitions_heading(heading: str) -> bool:
    """The heading names a provision of definitions ("§ 2 Begriffsbestimmungen", "1.2 Definitions")."""
    return bool(_definition_patterns()[0].search(heading or ""))


def defines(sentence: str) -> bool:
    """The sentence defines a term ("… ist, wer …", "'firm' means …") instead of stating a rule."""
    return bool(_definition_patterns()[1].search(sentence))


def asks_for_definition(question: str) -> bool:
    """The question asks what a term means: then a definition answers it."""
    return bool(_definition_patterns()[2].search(question))


@lru_cache(maxsize=1)
def model_address_pattern() -> re.Pattern:
    """Text addressed to an AI system, in every language (an injected note mixes them): a note to a model, an
    imperative about what to say, cite, ignore or conceal, a role prefix at a line start ("SYSTEM:")."""
    roles = r"^\s*(?:SYSTEM|ASSISTANT|USER)\s*:"
    return re.compile("|".join([*words_of("ADDRESSES_A_MODEL"), roles]), re.IGNORECASE | re.MULTILINE)


def addresses_a_model(text: str) -> bool:
    """Whether `text` speaks to a model instead of stating what a document says (document text is data: such
    a passage is never quoted, decisive or followed, kb/ingest/chunking.py flags it at ingest)."""
    return bool(model_address_pattern().search(text))


@lru_cache(maxsize=1)
def _repealed_marks() -> tuple[str, ...]:
    return tuple(mark.lower() for mark in words_of("REPEALED_MARKS"))


def repealed_spans(text: str) -> list[str]:
    """The headings of `text` that say their sections are gone (`repealed_pattern`); a text without any
    repealed mark is not scanned (the check runs on every passage a research reads)."""
    lowered = text.lower()
    if not any(mark in lowered for mark in _repealed_marks()):
        return []
    return [found.group(0) for found in repealed_pattern().finditer(text)]


@lru_cache(maxsize=1)
def repealed_pattern() -> re.Pattern:
    """A heading that says its sections are gone: "§ 12 (weggefallen)", "§§ 14 bis 16 (weggefallen)", "Art. 5
    [repealed]"; groups `unit`, `first`, `last` (a range's end or a second number, when there is one)."""
    joins = _alternatives([*words_of("RANGE_WORDS"), "-", "–"])
    return re.compile(rf"(?P<unit>§§?|Art\.|Artikel|Anlage|Annex|[Ss]ections?|[Rr]ules?)\s*(?P<first>\d+[a-z]?)"
                      rf"(?:\s*(?:{joins})\s*(?P<last>\d+[a-z]?))?\s*{_repealed_mark()}", re.IGNORECASE)


def _repealed_mark() -> str:
    """The mark that says a unit is gone, in brackets: "(weggefallen)", "[repealed]"."""
    return rf"[(\[]\s*(?:{_alternatives(words_of('REPEALED_MARKS'))})\s*[)\]]"


@lru_cache(maxsize=1)
def furniture_pattern() -> re.Pattern:
    """Text of a statute that states nothing and ends no sentence, with the space after it: a numbered paragraph
    that is gone ("(3) (weggefallen) ", "(2a) [repealed] ") and the editor's note of where an annex was published
    ("(Fundstelle: BGBl. I 2017, 2046) "). Read as part of a sentence, the paragraph after it would be quoted
    behind it ("(3) (weggefallen) (4) Die Genehmigung …")."""
    repealed = rf"\(\d+[a-z]?\)\s*{_repealed_mark()}"
    notes = words_of("EDITORIAL_NOTES")
    note = rf"|\((?:{_alternatives(notes)})\s*:[^()]*\)" if notes else ""
    return re.compile(rf"(?:{repealed}{note})\s*", re.IGNORECASE)


def correct_ocr(text: str, language: str, heading: bool = False) -> str:
    """`text` as Tesseract read it on a page in `language`, with that language's known misreads corrected; with
    `heading`, also those only a line read as a heading can have."""
    module = LANGUAGES.get(language)
    for pattern, replacement in getattr(module, "OCR_HEADING_MISREADS" if heading else "OCR_MISREADS", []):
        text = re.sub(pattern, replacement, text)
    return text


def tesseract_code(language: str) -> str:
    """Tesseract's model name for `language` ("de" -> "deu"), "" when there is none."""
    return getattr(LANGUAGES.get(language), "TESSERACT_CODE", "")
