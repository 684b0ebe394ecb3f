"""A real JupyterLab on loopback with a token, and headless Debian Chromium driven by Playwright."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import pytest

from tests.conftest import REPO

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = REPO / "test-artifacts" / "browser"

# a cell kept whole (page, depth, relevance, file and section names) that wraps, or is wider than it shows,
# in the rendered table: computed in the browser, from each cell's text lines and scroll width
BROKEN_CELLS_JS = """() => [...document.querySelectorAll('table.rh-tier-table td.rh-whole')]
    .filter(td => td.offsetParent && td.textContent.trim())
    .filter(td => {
        const range = document.createRange(); range.selectNodeContents(td);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        return lines.size > 1 || td.scrollWidth > td.clientWidth + 1; })
    .map(td => td.textContent)"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lab_command(port: int, token: str, home: Path) -> list[str]:
    """JupyterLab started as the README starts it, `make lab`, with the options a test needs (LAB_ARGS): a free
    port, a token, no browser, its own settings. The Makefile target is run in this interpreter's venv and is
    told the venv is installed (`-o`), so it never reinstalls under a running test."""
    venv = Path(sys.prefix)
    options = [f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1", "--no-browser",
               f"--IdentityProvider.token={token}", f"--LabApp.user_settings_dir={home / 'user-settings'}",
               f"--LabApp.workspaces_dir={home / 'workspaces'}", "--LabApp.extension_manager=readonly", "--allow-root"]
    return ["make", "--no-print-directory", "-o", f"{venv}/.installed", "lab", f"VENV={venv}",
            f"LAB_ARGS={' '.join(options)}"]


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium (apt-get install chromium), which .ci/run installs")
    if not shutil.which("make"):
        pytest.skip("needs make: the browser tests start JupyterLab with the README's `make lab`")
    port, token = _free_port(), uuid.uuid4().hex
    home = tmp_path_factory.mktemp("jupyter")
    settings = home / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    # autosave stays on, as a researcher has it: the pre-save hook keeps the tracked notebooks without outputs
    # HITL_CONVERGENCE_MAX_GAPS=0: a question with an aspect the demo KB lacks keeps the clarification going
    env = os.environ | {"LLM_PROVIDER": "extractive", "HITL_CONVERGENCE_MAX_GAPS": "0",
                        "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "TOKENIZERS_PARALLELISM": "false"}
    log = open(home / "lab.log", "w")  # noqa: SIM115 - closed below
    # its own process group: make's child, the Jupyter server, is stopped with it
    server = subprocess.Popen(lab_command(port, token, home), cwd=REPO, env=env, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2):
                break
        except OSError:
            if server.poll() is not None:
                raise RuntimeError((home / "lab.log").read_text()) from None
            time.sleep(0.5)
    else:
        os.killpg(server.pid, signal.SIGTERM)
        raise RuntimeError("JupyterLab did not start: " + (home / "lab.log").read_text()[-2000:])
    yield {"base": base, "token": token, "log": home / "lab.log"}
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
    log.close()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    yield page
    context.close()


class Shots:
    """Numbered screenshots of each step, kept as test artifacts."""

    def __init__(self, page, folder: Path):
        self.page, self.folder, self.count = page, folder, 0
        folder.mkdir(parents=True, exist_ok=True)

    def __call__(self, name: str) -> Path:
        self.count += 1
        path = self.folder / f"{self.count:02d}_{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path
