"""Tracked notebooks stay without outputs: the workbench's widgets, answers and document text are a
researcher's session, not part of the repository. `scrub_on_save` is a Jupyter pre-save hook
(`jupyter_server_config.py`, used by `make lab`) that saves the project's notebooks in `notebooks/`
without outputs; executed batch reports elsewhere keep theirs."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

TRACKED_FOLDER = "notebooks"  # the project's notebooks: the folder of that name beside its pyproject.toml
DEFAULT_KERNEL = {"display_name": "Python 3", "language": "python", "name": "python3"}  # as the repository has it


def clear_outputs(notebook: dict[str, Any]) -> dict[str, Any]:
    """The notebook (nbformat 4 as a dict) without outputs, execution counts or saved widget state, and with
    the kernel named as the repository names it: a running kernel writes its own display name and its
    Python's version into the metadata, which would change the tracked file on every machine."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    metadata = notebook.setdefault("metadata", {})
    metadata.pop("widgets", None)
    if "language_info" in metadata:
        metadata["language_info"] = {"name": metadata["language_info"].get("name", "python")}
    kernelspec = metadata.get("kernelspec") or {}
    if kernelspec.get("name") == DEFAULT_KERNEL["name"]:
        metadata["kernelspec"] = dict(DEFAULT_KERNEL)
    return notebook


def is_tracked_notebook(path: str, root_dir: str | None = None) -> bool:
    """Whether `path` (relative to the server's root `root_dir`) is one of the project's notebooks, wherever
    the server is rooted: `notebooks/x.ipynb` from the repository, `x.ipynb` from notebooks/ itself."""
    relative = path.lstrip("/")
    if root_dir is None:
        return relative.startswith(f"{TRACKED_FOLDER}/")
    folder = (Path(root_dir) / relative).resolve().parent
    return folder.name == TRACKED_FOLDER and (folder.parent / "pyproject.toml").is_file()


def scrub_on_save(model: dict[str, Any], path: str, contents_manager: Any = None, **kwargs: Any) -> None:
    """Jupyter pre-save hook: a notebook of the project's `notebooks/` is saved without outputs."""
    root_dir = getattr(contents_manager, "root_dir", None)
    if model.get("type") != "notebook" or not is_tracked_notebook(path, root_dir):
        return
    clear_outputs(model["content"])
    logger.debug("Saved %s without outputs", path)
