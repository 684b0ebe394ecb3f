"""The selected extractive answer written out (`answer_selection.py`): framing in the question's language,
quotations verbatim in the documents' language, each with its citation "[document, S. N]" (the report
numbers them); a long enumeration as its excerpt, the items the question does not ask about elided with "…"
(`excerpts.py`).

    **Ergebnis:** Maßgeblich ist § 73 StrlSchV → § 78 StrlSchG.
    § 73 StrlSchV: „…“ [StrlSchV, S. 52]
    § 73 StrlSchV → § 78 StrlSchG: „…“ [StrlSchG, S. 61]

    **Aufgabe 1: …**
    **§ 12 StrlSchV**: „…“ [StrlSchV, S. 20]
"""

from __future__ import annotations

import re

from rabbithole_lab.evidence.citation_format import citation_label
from rabbithole_lab.messages.catalogue import reasoner_text
from rabbithole_lab.reasoning.base import AnswerTask
from rabbithole_lab.reasoning.extractive.writer.answer_selection import Selection, Statement, body_sections

# characters that would open emphasis or a citation inside the answer's own markup
_MARKUP = re.compile(r"[*\[\]]")
ARROW = " → "


def _plain(text: str) -> str:
    return " ".join(_MARKUP.sub("", text).split())


def quoted(statement: Statement, language: str, excerpts: dict[int, str] | None = None) -> str:
    """The statement's sentences in quotation marks, each with its citation; a long one as its excerpt."""
    open_quote, close_quote = ("„", "“") if language == "de" else ("“", "”")
    shown = excerpts or {}
    return " ".join(f"{open_quote}{shown.get(id(s), s.text)}{close_quote} "
                    f"{citation_label(statement.provision.doc, s.page, language)}" for s in statement.sentences)


def label(statement: Statement) -> str:
    """The statement's provision, with the one whose reference led to it ("§ 73 StrlSchV → § 78 StrlSchG")."""
    own = statement.provision.label
    return f"{statement.source.label}{ARROW}{own}" if statement.source is not None else own


def statement_line(statement: Statement, language: str, bold: bool = False,
                   excerpts: dict[int, str] | None = None) -> str:
    name = f"**{label(statement)}**" if bold else label(statement)
    return f"{name}: {quoted(statement, language, excerpts)}"


def statement_cost(statement: Statement, language: str, excerpts: dict[int, str] | None = None) -> int:
    """The characters the statement takes in the answer (its line and the blank line before it)."""
    return len(statement_line(statement, language, bold=True, excerpts=excerpts)) + 2


def decisive_chain_provisions(selection: Selection) -> list:
    """The provisions `decisive_chain` names, the decisive one first."""
    if not selection.lead:
        return []
    opening = selection.lead[0]
    if opening.source is not None:
        return [opening.source, opening.provision]
    chain = [opening.provision]
    for statement in selection.lead:
        if statement.source is opening.provision and all(p is not statement.provision for p in chain):
            chain.append(statement.provision)
    return chain


def decisive_chain(selection: Selection) -> str:
    """The lead's first provision and the provisions its references led to in the lead ("A → B, C")."""
    if not selection.lead:
        return ""
    opening = selection.lead[0]
    if opening.source is not None:  # reached by a reference whose citing sentence the lead does not quote
        return label(opening)
    targets = [s.provision.label for s in selection.lead if s.source is opening.provision]
    return opening.provision.label + (ARROW + ", ".join(dict.fromkeys(targets)) if targets else "")


def merged(statements: list[Statement]) -> list[Statement]:
    """Consecutive statements of one provision (reached the same way) as one line."""
    out: list[Statement] = []
    for statement in statements:
        if out and out[-1].provision is statement.provision and out[-1].source is statement.source:
            out[-1] = Statement(statement.provision, out[-1].sentences + statement.sentences, out[-1].covers,
                                statement.source, out[-1].score)
        else:
            out.append(statement)
    return out


def written_answer(selection: Selection, tasks: list[AnswerTask], language: str) -> list[str]:
    text = reasoner_text(language)
    lines: list[str] = []
    if selection.lead and selection.abstains:
        contenders = [s.provision.label for s in selection.lead if s.covers == "verdict"]
        lines.append(text["opening_several"].format(provisions=", ".join(dict.fromkeys(contenders))))
        for statement in merged(selection.lead):
            lines.append(statement_line(statement, language, excerpts=selection.excerpts))
    elif selection.lead:
        lines.append(text["opening"].format(decisive=decisive_chain(selection)))
        for statement in merged(selection.lead):
            line = statement_line(statement, language, excerpts=selection.excerpts)
            lines.append(text["rival"].format(line=line) if statement.covers == "rival" else line)
    sections = body_sections(selection, tasks)
    with_section = {task.id for task, _ in sections if task is not None}
    for number, task in enumerate(tasks, start=1):
        if task.id in with_section:
            statements = next(items for owner, items in sections if owner is task)
            lines += ["", text["task_heading"].format(number=number, task=_plain(task.task))]
            lines += [line for statement in statements
                      for line in ("", statement_line(statement, language, True, selection.excerpts))]
        elif not task.chunk_ids:  # it found nothing at all: say what was searched
            searched = (", ".join(_plain(q) for q in task.queries) or _plain(task.task)).rstrip(".")
            lines += ["", text["task_heading"].format(number=number, task=_plain(task.task)),
                      "", text["task_not_found"].format(queries=searched)]
    rest = next((items for owner, items in sections if owner is None), [])
    if rest:
        lines += ["", text["more_heading"]]
        lines += [line for statement in rest
                  for line in ("", statement_line(statement, language, True, selection.excerpts))]
    return lines
