"""Synthesis that fits the window: when the whole context does not fit one call, the answer is written in
parts (map), each approved task from the passages it found, and then once more from the parts' findings
(reduce). Each call stays within the window; the quotes and the pages the parts cite go on to the answer."""

from __future__ import annotations

from dataclasses import replace

from rabbithole_lab import prompts
from rabbithole_lab.evidence.citation_format import citations_in
from rabbithole_lab.language.detection import language_name
from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.llm.prompt_inputs import chains_text, findings_text, tasks_text


def synthesis_inputs(request: SynthesisInput) -> dict:
    """The inputs of prompts.SYNTHESIS_PROMPT for `request`."""
    language = request.language
    quotes = "\n".join(f"- \"{q.quote}\" [{q.document}, p. {q.page}]" for q in request.quotes)
    summaries = "\n".join(f"- {s.get('task', '')}: {s.get('summary', '')}" for s in request.task_summaries)
    return dict(
        language=language_name(language), anchor=request.anchor, hitl_summary=request.hitl_summary or "-",
        primary=findings_text(request.primary, language), secondary=findings_text(request.secondary, language),
        tertiary=findings_text(request.tertiary, language), quotes=prompts.quoted(quotes or "-"),
        task_summaries=summaries or "-", tasks=tasks_text(request.tasks),
        task_findings=prompts.quoted("\n\n".join(request.task_findings) or "-"),
        chains=chains_text(request.chains, request.language) or "-", exclusions="; ".join(request.exclusions) or "-",
        remediation=f"Rewrite instructions: {request.remediation}" if request.remediation else "")


def parts_by_task(request: SynthesisInput, max_chars: int) -> list[SynthesisInput]:
    """One request per approved task with the passages it found (each passage in the first task that found
    it), and one for the passages no task found (the clarification's, the followed references'), answering
    the question itself; a part still too long for one call (`max_chars` of prompt) is halved, in passage
    order, until it fits. Parts without passages are left out: the final answer says "not found" for them."""
    chunks = request.all_chunks()
    placed: set[int] = set()
    parts = []
    groups = [([task], {c.chunk_id for c in chunks} & task.chunk_ids) for task in request.tasks]
    for tasks, ids in [*groups, ([], {c.chunk_id for c in chunks})]:
        mine = [c for c in chunks if c.chunk_id in ids and id(c) not in placed]
        placed.update(id(c) for c in mine)
        parts += _fitting(request, tasks, mine, max_chars) if mine else []
    return parts


def _fitting(request: SynthesisInput, tasks: list, chunks: list, max_chars: int) -> list[SynthesisInput]:
    pages = {(c.document, c.page) for c in chunks}
    part = replace(
        request, tasks=tasks, task_findings=[],
        primary=[c for c in chunks if c.tier == "primary"], secondary=[c for c in chunks if c.tier == "secondary"],
        tertiary=[c for c in chunks if c.tier == "tertiary"],
        quotes=[q for q in request.quotes if (q.document, q.page) in pages],
        task_summaries=[s for s in request.task_summaries if not tasks or s.get("task") == tasks[0].task])
    if len(chunks) < 2 or len(prompts.SYNTHESIS_PROMPT.format(**synthesis_inputs(part))) <= max_chars:
        return [part]
    half = len(chunks) // 2
    return _fitting(request, tasks, chunks[:half], max_chars) + _fitting(request, tasks, chunks[half:], max_chars)


def combined(request: SynthesisInput, findings: list[str]) -> SynthesisInput:
    """The final request: the question, every task and reference chain, the parts' findings with their
    citations, and the preserved quotes of the pages they cite, without the passages themselves."""
    cited = {(doc, page) for text in findings for doc, page in citations_in(text)}
    return replace(request, primary=[], secondary=[], tertiary=[], task_findings=findings,
                   quotes=[q for q in request.quotes if (q.document, q.page) in cited])
