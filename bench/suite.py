"""The test suite as CI runs it: a fresh clone of HEAD, `.ci/run` (install from scratch, then the README's
test command), cold caches (empty index, session and vector caches of its own). Records the test time pytest
reports, the wall time with the install, and the test counts.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from bench.common import REPO, SHARED, BenchContext, write_result

SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ (?:passed|failed).*?) in (?P<seconds>[\d.]+)s", re.MULTILINE)
# the clean-clone CI run at bbad4dd that issue 44 set out to speed up (session 28's note: 692 passed in
# 28 min 24 s, 32 min 23 s with the install)
BEFORE = {"commit": "bbad4dd", "pytest_s": 1704, "wall_s": 1943, "passed": 692, "failed": 0}


def bench(context: BenchContext) -> dict:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as scratch:
        clone = Path(scratch) / "clone"
        subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
        (Path(scratch) / "shared").symlink_to(SHARED)  # the clone reads ../shared in place, as CI's checkout does
        environment = {**os.environ, "CI": "true", "RABBITHOLE_INDEX_CACHE": str(Path(scratch) / "index-cache"),
                       "RABBITHOLE_SESSION_CACHE": str(Path(scratch) / "session-cache"),
                       "EMBEDDING_VECTOR_CACHE": str(Path(scratch) / "vectors")}
        done = subprocess.run([str(clone / ".ci" / "run")], cwd=clone, env=environment, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        (context.out("suite") / "ci.log").write_text(done.stdout[-200_000:] + done.stderr[-50_000:],
                                                    encoding="utf-8")
    wall_s = time.perf_counter() - started
    summary = SUMMARY.findall(done.stdout)
    counts, seconds = summary[-1] if summary else ("", "0")
    numbers = {"pytest_s": round(float(seconds), 1), "wall_s": round(wall_s, 1), "exit_code": done.returncode,
               **{kind: int(count) for count, kind in re.findall(r"(\d+) (passed|failed|skipped|errors?)", counts)},
               "before": BEFORE}
    numbers.setdefault("failed", 0)
    numbers.setdefault("skipped", 0)
    return {"numbers": numbers, "path": write_result("suite", context, numbers, started)}
