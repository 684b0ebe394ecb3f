"""The extractive reasoner: every reasoning step without an LLM, deterministic.

Sentences are selected by the question's terms they carry (plus the embedder's similarity for text in a
language the embedder was trained on: the default multilingual-e5 reads German and English; an
English-only model such as MiniLM gives no evidence on German statute text) and kept verbatim, so every
claim in the report is a quotation with its citation. Clarification questions and the to-do list are
built from the query's concepts that retrieval did not cover. Quality is scored from measurable
properties of the answer (citation coverage, support of each sentence by the cited source, structure,
relevance to the question).

One role per module: extractive_dialogue (clarifier), extractive_planning (planner), extractive_reading
(extractor, relevance), extractive_writing (synthesiser), extractive_judging
(quality check, remediation); extractive_base holds what they share.
"""

from __future__ import annotations

from rabbithole_lab.reasoning.extractive.extractive_dialogue import ExtractiveClarifier
from rabbithole_lab.reasoning.extractive.extractive_judging import ExtractiveJudge
from rabbithole_lab.reasoning.extractive.extractive_planning import ExtractivePlanner
from rabbithole_lab.reasoning.extractive.extractive_reading import ExtractiveReader
from rabbithole_lab.reasoning.extractive.writer.extractive_writing import ExtractiveWriter


class ExtractiveReasoner(ExtractiveClarifier, ExtractivePlanner, ExtractiveReader, ExtractiveWriter, ExtractiveJudge):
    """Deterministic reasoning: the configured embedder's similarity and the question's words."""
