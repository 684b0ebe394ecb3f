"""What the graph needs from the outside, passed to `build_graph` (nothing is built at import)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rabbithole_lab.kb.search import KnowledgeBase
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.rabbithole.follow import RabbitholeFollower
from rabbithole_lab.reasoning.base import Reasoner
from rabbithole_lab.settings import Settings


@dataclass
class Services:
    settings: Settings
    kb: KnowledgeBase
    reasoner: Reasoner
    kb_dir: Path | None = None  # where the PDFs live, for source links

    def follower(self) -> RabbitholeFollower:
        llm_extract = getattr(self.reasoner, "extract_references", None) if self.reasoner.info.provider != "extractive" else None
        return build_follower(self.kb, self.settings, decider=self.reasoner, llm_extract=llm_extract)


def open_services(settings: Settings, kb_dir: Path | None = None, db_path: Path | None = None,
                  provider_choice=None) -> Services:
    """Open the knowledge base and choose the reasoner (probing Ollama unless a choice is given)."""
    from rabbithole_lab.kb.factory import open_knowledge_base
    from rabbithole_lab.reasoning.factory import build_reasoner

    kb = open_knowledge_base(settings, kb_dir, db_path)
    reasoner = build_reasoner(settings, kb.index.embedder.embed_documents, provider_choice)
    return Services(settings, kb, reasoner, Path(kb_dir) if kb_dir else None)
