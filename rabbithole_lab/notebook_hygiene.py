"""Tracked notebooks stay without outputs: the workbench's widgets, answers and document text are a
researcher's session, not part of the repository. `scrub_on_save` is a Jupyter pre-save hook
(`jupyter_server_config.py`, used by `make lab`) that saves the project's notebooks in `notebooks/`
without outputs; executed batch reports elsewhere keep theirs."""

from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

TRACKED_FOLDER = "notebooks/"  # relative to the server's root, the repository


def clear_outputs(notebook: dict[str, Any]) -> dict[str, Any]:
    """The notebook (nbformat 4 as a dict) without outputs, execution counts or saved widget state."""
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    notebook.get("metadata", {}).pop("widgets", None)
    return notebook


def scrub_on_save(model: dict[str, Any], path: str, contents_manager: Any = None, **kwargs: Any) -> None:
    """Jupyter pre-save hook: a notebook under `notebooks/` is saved without outputs."""
    if model.get("type") != "notebook" or not path.lstrip("/").startswith(TRACKED_FOLDER):
        return
    clear_outputs(model["content"])
    logger.debug("Saved %s without outputs", path)
