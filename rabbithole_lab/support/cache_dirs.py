"""Where this machine's caches live: $XDG_CACHE_HOME/rabbithole-lab, else ~/.cache/rabbithole-lab (an empty
XDG_CACHE_HOME counts as unset, as the XDG specification says)."""

from __future__ import annotations

import os
from pathlib import Path


def machine_cache(name: str) -> Path:
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "rabbithole-lab" / name
