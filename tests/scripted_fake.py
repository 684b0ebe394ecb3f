"""A scripted fake chat model for tests and benchmarks only (it lives with the tests, outside the package).

It extends LangChain's `FakeListChatModel`: the answer is chosen by which prompt of prompts.py
is asked (a phrase of its "### Task" line), so concurrent calls get the right answer. A scripted
item can be a string, a callable `prompt -> str`, or an exception instance to raise.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeListChatModel
from pydantic import ConfigDict, Field, PrivateAttr

from rabbithole_lab.prompts import QUOTED_CLOSE, QUOTED_OPEN

TASK_PHRASES = {
    "hitl_queries": "search queries for a document collection",
    "analyze_retrieval": "Analyse what the retrieved passages cover",
    "follow_up_questions": "follow-up questions",
    "hitl_context_summary": "Summarise the clarification dialogue",
    "research_queries": "Write the final research queries",
    "anchor_terms": "List what the researcher's answers add",
    "generate_todo": "Plan the research as a to-do list",
    "task_search_queries": "targeted search queries for one research task",
    "corpus_language_queries": "for a question asked in another language",
    "extract_info": "Extract what this passage says",
    "extract_references": "List every reference in the text",
    "decide_reference": "Decide whether following this reference",
    "summarize_task": "Summarise the findings of one research task",
    "assess_task": "Judge whether one research task is answered",
    "adapt_todo": "Re-plan the remaining research tasks",
    "score_relevance": "Score how relevant a finding is",
    "synthesize": "Answer the research question from the graded context",
    "assess_quality": "Rate the answer on five dimensions",
    "decide_remediation": "Decide how to fix a weak answer",
}

ScriptItem = str | Callable[[str], str] | BaseException


class ScriptedFakeChatModel(FakeListChatModel):
    """Answers by prompt step; `script[step]` is one item (repeated) or a list consumed in order."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    responses: list[str] = Field(default_factory=lambda: ["{}"])
    script: dict[str, Any] = Field(default_factory=dict)
    delay_s: float = 0.0
    prompts_seen: list[str] = Field(default_factory=list)
    in_flight: int = 0  # calls being answered right now
    peak_in_flight: int = 0  # the most calls answered at the same time (concurrency shows here)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake-chat-model"

    def step_of(self, prompt: str) -> str:
        task_line = prompt.split("### Input", 1)[0]
        for step, phrase in TASK_PHRASES.items():
            if phrase in task_line:
                return step
        return "unknown"

    def calls_for(self, step: str) -> int:
        return sum(1 for p in self.prompts_seen if self.step_of(p) == step)

    def _call(self, messages, stop=None, run_manager=None, **kwargs) -> str:
        prompt = "\n".join(str(m.content) for m in messages)
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        if self.delay_s:
            time.sleep(self.delay_s)
        with self._lock:
            self.in_flight -= 1
            self.prompts_seen.append(prompt)
            step = self.step_of(prompt)
            entry = self.script.get(step, "{}")
            if isinstance(entry, list):
                item = entry.pop(0) if len(entry) > 1 else (entry[0] if entry else "{}")
            else:
                item = entry
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            return item(prompt)
        return item


def _passage_sentence(prompt: str) -> str:
    """The first sentence of the passage in an extraction prompt, verbatim."""
    body = prompt.split("### Rules", 1)[0].split(":\n", 2)[-1]
    if QUOTED_OPEN in body:  # the fenced document text
        body = body.split(QUOTED_OPEN, 1)[1].split(QUOTED_CLOSE, 1)[0]
    for sentence in re.split(r"(?<=[.])\s+", " ".join(body.split())):
        if len(sentence) > 30:
            return sentence[:400]
    return " ".join(body.split())[:200]


def _extraction(prompt: str) -> str:
    sentence = _passage_sentence(prompt)
    document = re.search(r"Passage from (.+?), page (\d+)", prompt)
    quote = {"quote": sentence, "relevance_reason": "Wortlaut"}
    if document:
        quote |= {"document": document.group(1), "page": int(document.group(2))}
    return json.dumps({"extracted_info": sentence, "preserved_quotes": [quote]}, ensure_ascii=False)


def _synthesis(language: str) -> Callable[[str], str]:
    def answer(prompt: str) -> str:
        cited = re.findall(r"\[([^\[\]]+?), (?:p|S)\. (\d+)\]", prompt)
        doc, page = cited[0] if cited else ("unbekannt.pdf", "1")
        # the final call of a synthesis in parts: the findings of the parts carry every page they cite on
        parts = prompt.split("Findings of the tasks", 1)[-1].split("### Rules", 1)[0]
        carried = list(dict.fromkeys(re.findall(r"\[([^\[\]]+?), (?:p|S)\. (\d+)\]", parts)))
        text = (f"**Ergebnis:** Die Dokumente legen die Grenzwerte fest [{doc}, S. {page}]. Weitere Einzelheiten "
                f"stehen in den zitierten Abschnitten [{doc}, S. {page}]." if language == "de" else
                f"**In short:** The documents set out the requirements [{doc}, p. {page}]. Further details are in "
                f"the cited sections [{doc}, p. {page}].")
        # the shape the prompt asks for: one section per approved task it lists, the last one not found
        listed = prompt.split("Approved tasks", 1)[-1].split("Primary context", 1)[0]
        tasks = re.findall(r"^(\d+)\. (.+?)(?: \(searched: .*\))?$", listed, re.MULTILINE)
        source, page_word = ("Fundstelle", "S.") if language == "de" else ("Source", "p.")
        for number, task in tasks:
            body = ("nicht gefunden" if language == "de" else "not found") if number == str(len(tasks)) else \
                f"{source}: {doc} [{doc}, {page_word} {page}]"
            text += f"\n\n**{number}. {task}**\n\n{body}"
        if len(carried) > 1:
            label = "S." if language == "de" else "p."
            text += "\n\n" + " ".join(f"Fundstelle [{d}, {label} {n}]." for d, n in carried)
        # a schema-bound model fills every field: its answer names no single provision as decisive
        claim = {"claim": text.split(" [")[0].split(":** ")[-1], "sources": [f"{doc} p. {page}"]}
        return json.dumps({"answer": text, "decisive": "", "key_findings": [claim]}, ensure_ascii=False)

    return answer


def default_script(language: str = "de") -> dict[str, Any]:
    """Plausible answers for every step of a run in `language`."""
    german = language == "de"
    return {
        "hitl_queries": json.dumps({"queries": (["Grenzwerte berufliche Exposition", "Dosisgrenzwerte Überblick",
                                                 "Pflichten des Betreibers"] if german else
                                                ["occupational exposure limits", "dose limits overview",
                                                 "operator duties"])}, ensure_ascii=False),
        "analyze_retrieval": json.dumps({"key_concepts": ["Grenzwert" if german else "limit"],
                                         "entities": ["§ 12"], "scope": "Recht" if german else "law",
                                         "knowledge_gaps": ["Ausnahmen" if german else "exceptions"],
                                         "coverage_score": 0.5}, ensure_ascii=False),
        "follow_up_questions": json.dumps({"questions": (["Geht es um Erwachsene oder Jugendliche?",
                                                          "Welche Tätigkeit ist gemeint?"] if german else
                                                         ["Are adults or minors concerned?",
                                                          "Which activity is meant?"])}, ensure_ascii=False),
        "hitl_context_summary": json.dumps({"summary": "Der Nutzer fragt nach Grenzwerten für Beschäftigte."
                                            if german else "The user asks about limits for workers."},
                                           ensure_ascii=False),
        "research_queries": json.dumps({"queries": ["Grenzwerte", "Ausnahmen"] if german else ["limits", "exceptions"]},
                                       ensure_ascii=False),
        "generate_todo": json.dumps({"tasks": [{"task": "Grenzwerte ermitteln" if german else "Find the limits",
                                                "context": "Kern der Frage" if german else "core of the question"},
                                               {"task": "Ausnahmen prüfen" if german else "Check the exceptions",
                                                "context": "Vollständigkeit" if german else "completeness"}]},
                                    ensure_ascii=False),
        "task_search_queries": json.dumps({"queries": ["Grenzwert beruflich exponierte Personen", "§ 12 Grenzwerte"]
                                           if german else ["limit occupationally exposed", "section 4.2"]},
                                          ensure_ascii=False),
        "corpus_language_queries": json.dumps({"queries": ["Grenzwerte für beruflich exponierte Personen",
                                                            "Kalibrierung der Messgeräte"]}, ensure_ascii=False),
        "extract_info": _extraction,
        "extract_references": json.dumps({"references": []}),
        "decide_reference": json.dumps({"follow": True, "reason": "Der Verweis nennt den Grenzwert."
                                        if german else "The reference names the limit."}, ensure_ascii=False),
        "summarize_task": json.dumps({"summary": "Die Aufgabe ist durch die Fundstellen beantwortet." if german
                                      else "The task is answered by the passages.",
                                      "key_findings": ["Grenzwert gefunden" if german else "limit found"],
                                      "relevance_assessment": "hoch" if german else "high", "relevance_score": 0.8,
                                      "irrelevant_findings": []}, ensure_ascii=False),
        "assess_task": json.dumps({"answered": True, "missing": [], "reason": "Die Aufgabe ist beantwortet." if german
                                   else "The task is answered."}, ensure_ascii=False),
        "adapt_todo": json.dumps({"close": [], "add": []}),
        "score_relevance": json.dumps({"score": 0.9, "reason": "passt zur Frage" if german else "fits the question"},
                                      ensure_ascii=False),
        "synthesize": _synthesis(language),
        "assess_quality": json.dumps({"factual_accuracy": 90, "semantic_validity": 90, "structural_integrity": 85,
                                      "citation_correctness": 90, "query_relevance": 90, "issues_found": []}),
        "decide_remediation": json.dumps({"retry": True, "instructions": "Mehr Quellen zitieren" if german
                                          else "Cite more sources"}, ensure_ascii=False),
    }
