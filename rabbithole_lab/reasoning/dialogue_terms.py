"""What a researcher's clarification answers add to the question, read by rules (no model): the words of
the answers against the question's own.

- **Exclusions** follow a negating word ("ohne Genehmigungsverfahren", "nicht für Kinder", "keine
  Altanlagen", "außer Röntgen"; "without", "not for", "no", "except", "excluding"): the phrase up to the
  next comma, stop or conjunction is a case to leave out.
- **Restrictions** ("nur Erwachsene", "only adults", "ausschließlich", "solely") narrow the question to a
  case: that case is an addition the research must cover (what it excludes is left unsaid, so nothing
  is invented).
- **Additions** are the answers' other aspects the question does not already hold: runs of content words
  ("Kategorie A", "eye lens"), never a function word or a filler of the dialogue ("Gemeint ist …", "I mean
  …"), each ending with a word that names a subject in the answer's language (`language.is_term_word`).
- **Provisions** are the citations the answers make, read by the citation grammar ("§ 12 QStrG").
"""

from __future__ import annotations

import re

from rabbithole_lab.language import dialogue_filler_words, is_term_word, patterns, question_stop_words
from rabbithole_lab.language.bridge import glossary_terms
from rabbithole_lab.rabbithole.references import detect_references_regex
from rabbithole_lab.reasoning.text import contains_concept, stems
from rabbithole_lab.schemas import AnchorTerms

_CASE_WORD = re.compile(r"[A-Za-zÄÖÜäöüß][\wÄÖÜäöüß-]*|\d+")
_NEGATION = patterns.negation()  # the words are each language's (language/de.py, en.py)
_RESTRICTION = patterns.restriction()
_LEADING_WORDS = patterns.leading_words()
_ASPECT_TOKEN = re.compile(r"[^\W_][\w-]*|[^\w\s]")
ASPECT_MIN_CHARS = 4  # a one-word aspect shorter than this is no subject ("Art", "use")
END_COMMAND = "/end"
SKIP_COMMAND = "/skip"  # an unattended run's answer: no clarification wanted (said so in the report)


def _phrase(text: str) -> str:
    return _LEADING_WORDS.sub("", " ".join(text.split())).strip()


# "keine Regeln für Personen unter 18 Jahren", "no rules about minors": the case is what the rules are for
_CASE_AFTER = patterns.case_after()


def _case(text: str) -> str:
    phrase = _phrase(text)
    match = _CASE_AFTER.match(phrase)
    return _phrase(match.group("case")) if match else phrase


def aspect_phrases(text: str, language: str, question_stems: set[str]) -> list[str]:
    """The aspects a reply names: each run of content words between function words, fillers and punctuation,
    without the words the question already holds, ending with a word that names a subject ("Gemeint ist die
    Person der Kategorie A" -> "Kategorie A" when the question speaks of persons; "include the eye lens limit"
    -> "eye lens" when it asks for limits)."""
    filler = dialogue_filler_words()
    runs: list[list[str]] = [[]]
    for token in _ASPECT_TOKEN.findall(text):
        letter = len(token) == 1 and token.isupper() and runs[-1]  # "Kategorie A", "Anlage B"
        if letter:
            runs[-1].append(token)
        elif token.lower() in filler or not (token[0].isalnum() and (len(token) > 1 or token.isdigit())):
            runs.append([])
        else:
            runs[-1].append(token)
    aspects = []
    for run in runs:
        words = [word for word in run if not contains_concept(word, question_stems)]
        # a run ends with the word that names its subject; what stands before it qualifies it ("schwangere
        # Frauen"), what follows it without naming one is dropped ("Frauen gefragt")
        while words and not is_term_word(words[-1], language) and not words[-1].isdigit():
            words.pop()
        phrase = " ".join(words)
        if phrase and (len(words) > 1 or len(phrase) >= ASPECT_MIN_CHARS) and phrase not in aspects:
            aspects.append(phrase)
    return aspects


def user_answers(conversation: list[dict]) -> list[str]:
    """What the researcher said in the dialogue: their turns, without the end command."""
    return [text for turn in conversation if turn.get("role") == "user"
            and (text := str(turn.get("content", "")).strip()) and text.lower() != END_COMMAND]


def anchor_terms(question: str, answers: list[str], language: str) -> AnchorTerms:
    """Additions, exclusions and named provisions of the researcher's `answers` to `question`."""
    additions: list[str] = []
    exclusions: list[str] = []
    provisions: list[str] = []
    question_stems = stems(question)
    for answer in answers:
        if not answer.strip() or answer.strip().lower() == END_COMMAND:
            continue
        rest = answer
        for match in _NEGATION.finditer(answer):
            case = _case(match.group("case"))
            if case and case not in exclusions:
                exclusions.append(case)
            rest = rest.replace(match.group(0), " ")
        for match in _RESTRICTION.finditer(rest):
            case = _phrase(match.group("case"))
            if case and case not in additions and not contains_concept(case, question_stems):
                additions.append(case)
            rest = rest.replace(match.group(0), " ")
        for reference in detect_references_regex(rest):  # a provision named in an exclusion is no addition
            if reference.original_text not in provisions:
                provisions.append(reference.original_text)
            rest = rest.replace(reference.original_text, " ")
        for aspect in aspect_phrases(rest, language, question_stems):
            if not any(aspect.lower() in held.lower() for held in additions):
                additions.append(aspect)
    # what the researcher excludes anywhere is no aspect to add ("leave out apprentices; not apprentices")
    excluded_words = {word.lower() for case in exclusions for word in case.split()}
    additions = [term for term in additions if not set(term.lower().split()) <= excluded_words]
    return AnchorTerms(additions=additions, exclusions=exclusions, provisions=provisions)


def anchor_text(question: str, terms: AnchorTerms) -> str:
    """What the research searches and judges relevance by: the question with the aspects the researcher
    added and the provisions they named (exclusions are not searched for)."""
    extra = [term for term in [*terms.additions, *terms.provisions] if term not in question]
    return " ".join([question, *extra]).strip()


def excluded(sentence: str, exclusions: list[str]) -> bool:
    """The sentence speaks of a case the researcher excluded: every word of the case is in it, in the
    sentence's own language or, for a case written in another ("persons under 18" against German text), by
    the glossary's terms for each of its words and its numbers as written."""
    if not exclusions:
        return False
    sentence_stems = stems(sentence)
    return any(contains_concept(case, sentence_stems) or _held_word_by_word(case, sentence, sentence_stems)
               for case in exclusions)


def _case_words(case: str) -> tuple[tuple[str, str], ...]:
    """The case's content words, each with the glossary's German rendering ("" when it has none). Not cached
    here: a knowledge base's glossary can add a rendering later in the process (the bridge's own lookups are
    cached and cleared when it does)."""
    return tuple((word, "" if word.isdigit() else glossary_terms(word)) for word in _CASE_WORD.findall(case)
                 if word.lower() not in question_stop_words())


def _held_word_by_word(case: str, sentence: str, sentence_stems: set[str]) -> bool:
    words = _case_words(case)
    if not words:
        return False
    for word, rendering in words:
        if word.isdigit():
            if not re.search(rf"(?<!\d){word}(?!\d)", sentence):
                return False
        elif not (contains_concept(word, sentence_stems)
                  or (rendering and contains_concept(rendering, sentence_stems))):
            return False
    return True
