"""Safe exit: the workbench asks the real Jupyter server to shut its kernel down, with and without a token."""

from __future__ import annotations

import http.cookiejar
import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from rabbithole_lab.ui.kernel import _delete_kernel


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(params=["", "secret-token"], ids=["no-token", "token"])
def server(request, tmp_path):
    port, token = _free_port(), request.param
    process = subprocess.Popen([sys.executable, "-m", "jupyter_server", "--no-browser", "--ServerApp.ip=127.0.0.1",
                                f"--ServerApp.port={port}", f"--IdentityProvider.token={token}",
                                "--ServerApp.password=", f"--ServerApp.root_dir={tmp_path}", "--allow-root"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PATH": "/usr/bin:/bin",
                                    "HOME": str(tmp_path)})
    base = f"http://127.0.0.1:{port}"
    for _ in range(120):
        try:
            urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    yield base, token
    process.terminate()
    process.wait(20)


def _start_kernel(base: str, token: str) -> str:
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/?token={token}").close()
    xsrf = next(c.value for c in jar if c.name == "_xsrf")
    request = urllib.request.Request(f"{base}/api/kernels?token={token}", method="POST", data=b"{}",
                                     headers={"X-XSRFToken": xsrf, "Content-Type": "application/json"})
    with opener.open(request) as response:
        return json.loads(response.read())["id"]


def _kernels(base: str, token: str) -> list[str]:
    with urllib.request.urlopen(f"{base}/api/kernels?token={token}") as response:
        return [kernel["id"] for kernel in json.loads(response.read())]


def test_the_kernel_is_shut_down_by_its_server(server):
    base, token = server
    kernel = _start_kernel(base, token)
    assert kernel in _kernels(base, token)
    assert _delete_kernel(base, kernel, token, timeout_s=10)
    assert kernel not in _kernels(base, token)
    # a plain DELETE without the XSRF check is what left the kernel running before
    other = _start_kernel(base, token)
    plain = urllib.request.Request(f"{base}/api/kernels/{other}", method="DELETE",
                                   headers={"Authorization": f"token {token}"} if token else {})
    if not token:
        with pytest.raises(urllib.error.HTTPError, match="403"):
            urllib.request.urlopen(plain)
        assert other in _kernels(base, token)
