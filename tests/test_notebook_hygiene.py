"""Tracked notebooks carry no outputs, and the workbench's pre-save hook keeps it so."""

from __future__ import annotations

import subprocess

import nbformat

from rabbithole_lab.ui.notebook_hygiene import scrub_on_save
from tests.conftest import REPO


def test_every_tracked_notebook_is_without_outputs():
    tracked = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=REPO, capture_output=True, text=True).stdout.split()
    if not tracked:  # a source tree without git: the notebooks on disk are the tracked ones
        tracked = [str(p.relative_to(REPO)) for p in REPO.glob("**/*.ipynb") if ".venv" not in p.parts
                   and "test-artifacts" not in p.parts and "reports" not in p.parts]
    assert any(name.startswith("notebooks/") for name in tracked)
    for name in tracked:
        notebook = nbformat.read(REPO / name, as_version=4)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert all(not cell.outputs and cell.execution_count is None for cell in code), name
        assert "widgets" not in notebook.metadata, name


def _model() -> dict:
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("workbench()")
    cell.outputs = [nbformat.v4.new_output("stream", text="Ergebnis: Maßgeblich ist § 3 der Hafenordnung")]
    cell.execution_count = 7
    notebook.cells = [cell]
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    # what a running kernel writes into the metadata
    notebook.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11.7", "file_extension": ".py"}
    return {"type": "notebook", "content": nbformat.from_dict(notebook)}


def test_the_pre_save_hook_clears_the_projects_notebooks_and_no_others():
    tracked = _model()
    scrub_on_save(tracked, "notebooks/research.ipynb")
    [cell] = tracked["content"]["cells"]
    assert cell["outputs"] == [] and cell["execution_count"] is None and "widgets" not in tracked["content"]["metadata"]
    on_disk = nbformat.read(REPO / "notebooks" / "research.ipynb", as_version=4).metadata
    assert tracked["content"]["metadata"] == on_disk  # no kernel's display name or Python version
    report = _model()
    scrub_on_save(report, "reports/2026-11-25_frage/research_report.ipynb")
    assert report["content"]["cells"][0]["outputs"]  # an executed report keeps what it shows


def test_the_repositorys_jupyter_config_names_the_hook():
    config = (REPO / "jupyter_server_config.py").read_text(encoding="utf-8")
    assert "rabbithole_lab.ui.notebook_hygiene.scrub_on_save" in config
    assert "--config=jupyter_server_config.py" in (REPO / "Makefile").read_text(encoding="utf-8")


class _Contents:
    def __init__(self, root_dir):
        self.root_dir = str(root_dir)


def test_the_hook_finds_the_projects_notebooks_wherever_the_server_is_rooted(tmp_path):
    from_notebooks = _model()  # a server started in notebooks/ sees the notebook at its root
    scrub_on_save(from_notebooks, "research.ipynb", contents_manager=_Contents(REPO / "notebooks"))
    assert from_notebooks["content"]["cells"][0]["outputs"] == []
    elsewhere = _model()  # a notebooks/ folder that is not the project's keeps its outputs
    (tmp_path / "notebooks").mkdir()
    scrub_on_save(elsewhere, "notebooks/x.ipynb", contents_manager=_Contents(tmp_path))
    assert elsewhere["content"]["cells"][0]["outputs"]


def test_the_lab_the_readme_starts_is_rooted_at_the_repository():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("jupyter_server_config.py", path=str(REPO)).load_config()
    assert config.ServerApp.root_dir == str(REPO.resolve())
    assert config.FileContentsManager.pre_save_hook == "rabbithole_lab.ui.notebook_hygiene.scrub_on_save"
