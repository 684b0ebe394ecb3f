"""The shaped extractive answer written out: framing in the question's language, quotations verbatim in
the documents' language, each with its citation "[document, S. N]" (the report numbers them)."""

from __future__ import annotations

import re

from rabbithole_lab.messages import reasoner_text
from rabbithole_lab.reasoning.answer import Provision, Sentence
from rabbithole_lab.reasoning.answer_shape import ShapedAnswer
from rabbithole_lab.reasoning.base import citation_label

# characters that would open emphasis or a citation inside the answer's own markup
_MARKUP = re.compile(r"[*\[\]]")


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub("", text).split())


def quoted(provision: Provision, sentences: list[Sentence], language: str) -> str:
    open_quote, close_quote = ("„", "“") if language == "de" else ("“", "”")
    return " ".join(f"{open_quote}{s.text}{close_quote} {citation_label(provision.doc, s.page, language)}"
                    for s in sentences)


def _names(provisions: list[Provision]) -> str:
    return ", ".join(dict.fromkeys(p.label for p in provisions))


def written_answer(shaped: ShapedAnswer, language: str) -> list[str]:
    text = reasoner_text(language)
    lines: list[str] = []
    if shaped.decisive is not None:
        lead = (text["opening_chain"].format(decisive=shaped.decisive.label, targets=_names(shaped.reached))
                if shaped.reached else text["opening"].format(decisive=shaped.decisive.label))
        lines.append(lead)
    for provision, sentence in shaped.opening:
        lines += ["", f"{provision.label}: {quoted(provision, [sentence], language)}"]
    for number, section in enumerate(shaped.sections, start=1):
        lines += ["", text["task_heading"].format(number=number, task=_plain(section.task.task))]
        for provision, sentences in section.parts:
            lines += ["", f"**{provision.label}**: {quoted(provision, sentences, language)}"]
        if section.quoted_above:
            lines += ["", text["task_quoted_above"].format(provisions=_names(section.quoted_above))]
        if not section.found:
            searched = ", ".join(_plain(q) for q in section.task.queries) or _plain(section.task.task)
            lines += ["", text["task_not_found"].format(queries=searched)]
    if shaped.rest:
        lines += ["", text["more_heading"]] if shaped.sections else []
        for provision, sentences in shaped.rest:
            lines += ["", f"**{provision.label}**: {quoted(provision, sentences, language)}"]
    if shaped.chain:
        lines += ["", text["chain_heading"]]
        for source, provision, sentences in shaped.chain:
            if sentences:
                lead = text["chain"].format(source=source.label, target=provision.label)
                lines += ["", f"{lead} {quoted(provision, sentences, language)}"]
            else:
                lines += ["", text["chain_above"].format(source=source.label, target=provision.label)]
    return lines
