"""Where the researcher's project is: the folder its `.env` and its `reports/` belong to.

The project is the first folder, from the working directory up, that holds a `pyproject.toml` or `.git`; the
working directory when there is none. A notebook runs in `notebooks/` and the CLI at the root: both find the
same project, so they share one `.env`, one sessions file and one folder of saved reports. Nothing the
research makes is written into or beside a knowledge-base folder: that may be a read-only or a colleague's
collection.
"""

from __future__ import annotations

from pathlib import Path

PROJECT_MARKERS = ("pyproject.toml", ".git")
SESSIONS_FILE = "sessions.sqlite"


def project_root(start: Path | None = None) -> Path:
    """The project folder above `start` (default: the working directory), else `start` itself."""
    here = Path(start or Path.cwd()).resolve()
    return next((folder for folder in (here, *here.parents) if _marks_a_project(folder)), here)


def _marks_a_project(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in PROJECT_MARKERS)


def find_env_file(env_file: str | Path | None) -> Path | None:
    """`env_file` where it is; a relative name missing from the working directory is looked for in the
    folders above it up to the project's root: a notebook runs in `notebooks/`, the project's `.env` is one
    folder up. Never above the project (a stray ~/.env)."""
    if env_file is None:
        return None
    path = Path(env_file)
    if path.is_absolute() or path.exists():
        return path
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / path).is_file():
            return folder / path
        if _marks_a_project(folder):
            break
    return path


def reports_dir(configured: Path | None = None) -> Path:
    """The folder of the project's sessions and saved reports: `configured` (RABBITHOLE_REPORTS_DIR), else
    `<project>/reports`."""
    return Path(configured).expanduser() if configured else project_root() / "reports"


def sessions_file(configured: Path | None = None) -> Path:
    """The one sessions file the CLI and the workbench share."""
    return reports_dir(configured) / SESSIONS_FILE
