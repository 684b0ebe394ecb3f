"""What the graph's nodes need from the outside: LangGraph's runtime context of a research run
(`rabbithole_lab/usecase/research_case.py` opens it; nothing is built at import)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rabbithole_lab.kb.retrieval.search import KnowledgeBase
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.rabbithole.follow import RabbitholeFollower
from rabbithole_lab.reasoning.base import Reasoner
from rabbithole_lab.records import ReferenceDecider
from rabbithole_lab.settings import Settings


@dataclass
class Services:
    settings: Settings
    kb: KnowledgeBase
    reasoner: Reasoner
    kb_dir: Path | None = None  # where the PDFs live, for source links
    gate: ReferenceDecider | None = None  # built once with the services unless given

    def __post_init__(self) -> None:
        if self.gate is None:
            from rabbithole_lab.reasoning.factory import build_gate

            self.gate = build_gate(self.settings, self.kb.index.embedder, self.reasoner)

    def follower(self) -> RabbitholeFollower:
        llm_extract = (
            getattr(self.reasoner, "extract_references", None) if self.reasoner.info.provider != "extractive" else None
        )
        assert self.gate is not None
        return build_follower(self.kb, self.settings, decider=self.gate, llm_extract=llm_extract)
