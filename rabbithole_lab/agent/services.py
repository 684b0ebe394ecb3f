"""What the graph needs from the outside, passed to `build_graph` (nothing is built at import)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rabbithole_lab.kb.search import KnowledgeBase
from rabbithole_lab.rabbithole.engine import build_follower
from rabbithole_lab.rabbithole.follow import RabbitholeFollower
from rabbithole_lab.rabbithole.gate import ReferenceDecider
from rabbithole_lab.reasoning.base import Reasoner
from rabbithole_lab.settings import Settings

PREPARE_LOCK_WAIT_S = 1800.0  # a first ingest of a large KB by another run may take this long


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
        llm_extract = getattr(self.reasoner, "extract_references", None) if self.reasoner.info.provider != "extractive" else None
        assert self.gate is not None
        return build_follower(self.kb, self.settings, decider=self.gate, llm_extract=llm_extract)


def open_services(settings: Settings, kb_dir: Path | None = None, db_path: Path | None = None,
                  provider_choice=None) -> Services:
    """Open the knowledge base and choose the reasoner (probing Ollama unless a choice is given)."""
    from rabbithole_lab.kb.factory import open_knowledge_base
    from rabbithole_lab.kb.ingest import KBFolderError
    from rabbithole_lab.reasoning.factory import build_reasoner

    if kb_dir is not None and not Path(kb_dir).is_dir():
        raise KBFolderError(f"Knowledge-base folder not found: {kb_dir}")
    kb = open_knowledge_base(settings, kb_dir, db_path)
    reasoner = build_reasoner(settings, kb.index.embedder, provider_choice)
    return Services(settings, kb, reasoner, Path(kb_dir) if kb_dir else None)


def prepare_services(settings: Settings, kb_dir: Path, db_path: Path | None = None,
                     show_progress: bool = True) -> Services:
    """Services over an ingested knowledge base: the folder must exist; new or changed files are
    ingested first; a folder without any usable document is an error, not an empty research run."""
    from rabbithole_lab.kb.ingest import KBFolderError, ingest

    services = open_services(settings, kb_dir, db_path)
    # another run may be bringing the same index up to date (batch workers share one): wait for it
    report = ingest(Path(kb_dir), services.kb.index, settings.kb, show_progress=show_progress,
                    lock_wait_s=PREPARE_LOCK_WAIT_S)
    if report.files_ingested:
        info = services.reasoner.info
        from rabbithole_lab.reasoning.provider import ProviderChoice

        services = open_services(settings, kb_dir, db_path,
                                 provider_choice=ProviderChoice(info.provider, info.model, info.reason))  # type: ignore[arg-type]
    if not services.kb.collections():
        raise KBFolderError(f"No usable documents in {kb_dir} (expected <Collection>__db_inserted/*.pdf|md|txt)")
    return services
