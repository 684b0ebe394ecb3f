"""How a prompt's inputs are written: passages, findings and the dialogue as quoted text, and the prompt
fitted to the model's safe context by shortening its largest inputs, never its task, rules or output format."""

from __future__ import annotations

from rabbithole_lab import prompts
from rabbithole_lab.evidence.citation_format import citation_label, citations_in
from rabbithole_lab.messages.reasons import edge_reason
from rabbithole_lab.records import ChunkWithInfo, VectorResult

PASSAGE_CHARS = 1200


UNTRUSTED_MARK = "[UNTRUSTED: addressed to AI systems, not a statement of the documents]"


def _marked(untrusted: bool) -> str:
    return f"{UNTRUSTED_MARK} " if untrusted else ""


def passages_text(passages: list[VectorResult], limit: int = 9) -> str:
    return prompts.quoted("\n".join(
        f"[{p.doc}, p. {p.page_start}] {p.section} {_marked(p.addressed_to_model)}"
        f"{' '.join(p.text.split())[:PASSAGE_CHARS]}" for p in passages[:limit]
    ) or "-", untrusted=any(p.addressed_to_model for p in passages[:limit]))


def findings_text(findings: list[ChunkWithInfo], language: str) -> str:
    return prompts.quoted(
        "\n".join(
            f"- ({f.tier}) {citation_label(f.document, f.page, language)} {_marked(f.addressed_to_model)}"
            f"{f.extracted_info or f.chunk_text[:PASSAGE_CHARS]}"
            for f in findings
        )
        or "-", untrusted=any(f.addressed_to_model for f in findings)
    )


TRIMMED_MARK = " […]"


def fit_prompt(template: str, inputs: dict, max_chars: int) -> str:
    """`template` filled with `inputs`, the largest text input cut (with a mark) until the whole fits in
    `max_chars`. The template's own text (task, rules, output format) is never cut: a template longer
    than the limit alone comes back with its inputs emptied as far as they go."""
    inputs = dict(inputs)
    prompt = template.format(**inputs)
    exhausted: set[str] = set()
    while len(prompt) > max_chars:
        texts = [name for name, value in inputs.items() if isinstance(value, str) and name not in exhausted]
        if not texts:
            break
        largest = max(texts, key=lambda name: len(inputs[name]))
        shorter = _shortened(inputs[largest], len(prompt) - max_chars)
        if len(shorter) >= len(inputs[largest]):
            exhausted.add(largest)  # nothing left to cut from it
            continue
        inputs[largest] = shorter
        prompt = template.format(**inputs)
    return prompt


def _shortened(value: str, excess: int) -> str:
    """`value` shorter by about `excess` characters; document text keeps its fence whole (`prompts.quoted`)."""
    head = f"{prompts.QUOTED_OPEN}\n" if value.startswith(f"{prompts.QUOTED_OPEN}\n") else ""
    tail = f"\n{prompts.QUOTED_CLOSE}" if head and value.endswith(f"\n{prompts.QUOTED_CLOSE}") else ""
    body = value[len(head) : len(value) - len(tail)]
    keep = max(0, len(body) - excess - len(TRIMMED_MARK))
    return head + (body[:keep].rstrip() + TRIMMED_MARK if keep else "-") + tail


def dialogue_text(conversation: list[dict]) -> str:
    return "\n".join(f"{turn.get('role')}: {turn.get('content')}" for turn in conversation) or "-"


def tasks_text(tasks: list) -> str:
    """The approved tasks (`AnswerTask`), numbered as the answer's sections, each with what it searched."""
    lines = [f"{number}. {task.task}" + (f" (searched: {'; '.join(task.queries)})" if task.queries else "")
             for number, task in enumerate(tasks, start=1)]
    return "\n".join(lines) or "-"


def chains_text(chains: list[dict], language: str) -> str:
    """One line per reference between provisions of the context: citing → cited ("reference", the paragraphs
    it names): why it counts."""
    lines = []
    for chain in chains:
        named = "; ".join(f"{section} {doc}: Abs. {', '.join(paragraphs)}"
                          for doc, section, paragraphs in chain.get("paragraphs", []))
        lines.append(f"- {chain['source']} → {chain['target']} (\"{chain['reference']}\""
                     f"{', ' + named if named else ''}): {edge_reason(chain, language)}")
    return "\n".join(lines)


JUDGED_SOURCE_CHARS = 1_500  # of each cited source's text the quality check is shown


def judged_sources(answer: str, sources: list[ChunkWithInfo], language: str) -> str:
    """The sources for the quality check: each one the answer cites with its text (quoted as data), so the
    judge can check a quotation against it; the others by their label."""
    cited = set(citations_in(answer))
    lines = []
    for source in sources:
        label = citation_label(source.document, source.page, language)
        pages = range(source.page, (source.page_end or source.page) + 1)
        if any((source.document, page) in cited for page in pages):
            text = prompts.quoted(source.chunk_text[:JUDGED_SOURCE_CHARS], source.addressed_to_model)
            lines.append(f"- {label}: {text}")
        else:
            lines.append(f"- {label}")
    return "\n".join(lines) or "-"
