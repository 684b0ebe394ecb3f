"""Shutting down the notebook's own kernel through the Jupyter server that runs it."""

from __future__ import annotations

import logging
import os
import re
import urllib.request
from pathlib import Path

logger = logging.getLogger(__name__)


def kernel_id_from_connection_file(path: str) -> str | None:
    match = re.search(r"kernel-([0-9a-f-]{8,})\.json$", Path(path).name)
    return match.group(1) if match else None


def shutdown_kernel(timeout_s: float = 5.0) -> bool:
    """Ask the local Jupyter server to shut this kernel down (DELETE /api/kernels/<id>).

    Returns False when no server could be asked (e.g. under papermill); the caller then leaves
    the kernel running rather than killing it behind the server's back.
    """
    try:
        from ipykernel.connect import get_connection_file
        from jupyter_server.serverapp import list_running_servers

        kernel_id = kernel_id_from_connection_file(get_connection_file())
    except Exception as exc:  # not inside a Jupyter kernel
        logger.warning("Not running in a Jupyter kernel: %s", exc)
        return False
    if not kernel_id:
        return False
    for server in list_running_servers():
        if _delete_kernel(server["url"].rstrip("/"), kernel_id, server.get("token", ""), timeout_s):
            return True
    logger.warning("No Jupyter server accepted the shutdown of kernel %s (pid %s)", kernel_id, os.getpid())
    return False


def _delete_kernel(base_url: str, kernel_id: str, token: str, timeout_s: float) -> bool:
    """DELETE /api/kernels/<id> on a local server. A server with a token accepts it as the credential; one
    without wants the XSRF check (the _xsrf cookie of its front page, echoed in the X-XSRFToken header),
    else it answers 403 and the kernel keeps running."""
    import http.cookiejar

    cookies = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
    headers = {"Authorization": f"token {token}"} if token else {}
    try:
        with opener.open(urllib.request.Request(f"{base_url}/", headers=headers), timeout=timeout_s):
            pass
    except OSError as exc:
        logger.debug("Server %s did not answer: %s", base_url, exc)
        return False
    xsrf = next((cookie.value for cookie in cookies if cookie.name == "_xsrf"), "")
    if xsrf:
        headers["X-XSRFToken"] = xsrf
    request = urllib.request.Request(f"{base_url}/api/kernels/{kernel_id}", method="DELETE", headers=headers)
    try:
        with opener.open(request, timeout=timeout_s) as response:  # local Jupyter server only
            return response.status in (200, 204)
    except OSError as exc:
        logger.debug("Server %s did not shut the kernel down: %s", base_url, exc)
        return False


__all__ = ["kernel_id_from_connection_file", "shutdown_kernel"]
