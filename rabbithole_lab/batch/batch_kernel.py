"""The kernel manager a batch question runs its report notebook with (papermill imports it by name).

Kernels are reached over local sockets (IPC), not TCP: nothing listens on a port, and the kernel does not warn
on every batch question that its TCP traffic is unencrypted. Each kernel's sockets are in a private folder of
their own (the default socket name is shared: two batch workers started at once talked to each other's
kernel), short enough for a socket's path (Jupyter's runtime folder under a deep home was too long); where
even that is too long, TCP as before.
"""

from __future__ import annotations

import shutil
import tempfile

from jupyter_client.manager import AsyncKernelManager

MAX_SOCKET_PATH_CHARS = 100  # a Unix socket's path: 108 bytes on Linux, 104 on macOS


class LocalKernelManager(AsyncKernelManager):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._socket_dir = tempfile.mkdtemp(prefix="rh-kernel-")
        ip = f"{self._socket_dir}/k"
        if len(ip) + len("-ipc-65535") <= MAX_SOCKET_PATH_CHARS:
            self.transport, self.ip = "ipc", ip

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        await super()._async_cleanup_resources(restart=restart)
        if not restart:
            shutil.rmtree(self._socket_dir, ignore_errors=True)

    cleanup_resources = _async_cleanup_resources
