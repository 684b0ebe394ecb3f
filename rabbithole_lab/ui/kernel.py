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
        url = f"{server['url'].rstrip('/')}/api/kernels/{kernel_id}"
        request = urllib.request.Request(url, method="DELETE",
                                         headers={"Authorization": f"token {server.get('token', '')}"})
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:  # local Jupyter server only
                if response.status in (200, 204):
                    return True
        except OSError as exc:
            logger.debug("Server %s did not shut the kernel down: %s", server.get("url"), exc)
    logger.warning("No Jupyter server accepted the shutdown of kernel %s (pid %s)", kernel_id, os.getpid())
    return False


__all__ = ["kernel_id_from_connection_file", "shutdown_kernel"]
