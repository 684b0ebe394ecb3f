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

# a cell kept whole (page, relevance, file and section names) that wraps, or is wider than it shows,
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


class RunningLab(dict):
    """A JupyterLab server started with the README's command: `base`, `token` and `log` as keys, and `restart()`,
    which stops the server and starts it again on the same port (what a researcher's restart of the Lab does)."""

    def __init__(self, home: Path):
        port, token = _free_port(), uuid.uuid4().hex
        super().__init__(base=f"http://127.0.0.1:{port}", token=token, log=home / "lab.log")
        self.port, self.home, self.server, self.log_file = port, home, None, None

    def start(self) -> None:
        # autosave stays on, as a researcher has it: the pre-save hook keeps the tracked notebooks without outputs
        # HITL_CONVERGENCE_MAX_GAPS=0: a question with an aspect the demo KB lacks keeps the clarification going
        env = os.environ | {"LLM_PROVIDER": "extractive", "HITL_CONVERGENCE_MAX_GAPS": "0",
                            "JUPYTER_RUNTIME_DIR": str(self.home / "runtime"), "TOKENIZERS_PARALLELISM": "false"}
        self.log_file = open(self["log"], "a")  # noqa: SIM115 - closed in stop()
        # its own process group: make's child, the Jupyter server, is stopped with it
        self.server = subprocess.Popen(lab_command(self.port, self["token"], self.home), cwd=REPO, env=env,
                                       stdout=self.log_file, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.time() + 90
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"{self['base']}/api/status?token={self['token']}", timeout=2):
                    return
            except OSError:
                if self.server.poll() is not None:
                    raise RuntimeError(self["log"].read_text()) from None
                time.sleep(0.5)
        self.stop()
        raise RuntimeError("JupyterLab did not start: " + self["log"].read_text()[-2000:])

    def stop(self) -> None:
        if self.server is None:
            return
        os.killpg(self.server.pid, signal.SIGTERM)
        try:
            self.server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.server.pid, signal.SIGKILL)
            self.server.wait(20)
        self.log_file.close()
        self.server = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture(scope="session")
def jupyter_lab(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip("needs Debian's chromium (apt-get install chromium), which .ci/run installs")
    if not shutil.which("make"):
        pytest.skip("needs make: the browser tests start JupyterLab with the README's `make lab`")
    home = tmp_path_factory.mktemp("jupyter")
    settings = home / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    lab = RunningLab(home)
    lab.start()
    yield lab
    lab.stop()


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
