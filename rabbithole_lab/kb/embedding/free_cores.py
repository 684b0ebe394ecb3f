"""How many threads an embedding batch should use: the cores other processes leave free.

numpy's bundled OpenBLAS spins its idle threads. With every core's thread asked for while another process keeps a
core busy, the threads wait on each other and on it: an ingest beside one CPU-bound process embedded at 0.41 of
its idle speed, and beside four or more at a third to a half of its fair share (issue 73). A thread count read
before each batch from what the others actually use keeps the ingest on the cores that are free, and on one core
when none is.

What the others use is measured, not guessed: the machine's busy time (`/proc/stat`) less this process's own CPU
time (and its finished children's), over the time since the last reading. The load average would count this
process's own threads and lag by a minute. Where `/proc/stat` cannot be read (not Linux) every core is used, as
before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

PROC_STAT = Path("/proc/stat")
FIRST_SAMPLE_S = 0.05  # the first reading's window: long enough to see a busy core, short against a batch
# /proc/stat's first line: user nice system idle iowait irq softirq steal (guest time is inside user already)
IDLE_FIELDS = (3, 4)
BUSY_FIELDS = (0, 1, 2, 5, 6, 7)


def machine_busy_s(path: Path = PROC_STAT) -> float | None:
    """The CPU seconds all cores have been busy since boot; None where the kernel does not say."""
    try:
        first = path.read_text(encoding="ascii").splitlines()[0].split()
    except (OSError, IndexError):
        return None
    ticks = [int(value) for value in first[1:9]]
    return sum(ticks[index] for index in BUSY_FIELDS if index < len(ticks)) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """This process's CPU seconds and those of its children that ended (the Tesseract processes an ingest runs for
    scanned pages are its own work, not another's)."""
    spent = os.times()
    return spent.user + spent.system + spent.children_user + spent.children_system


def usable_cores() -> int:
    """The cores this process may run on (its affinity, e.g. a container's cpuset), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class FreeCores:
    """Called before each batch: the threads it should use, 1 .. the usable cores. Readers are injectable so the
    arithmetic is tested on written numbers."""

    def __init__(self, busy: Callable[[], float | None] = machine_busy_s, own: Callable[[], float] = own_cpu_s,
                 clock: Callable[[], float] = time.monotonic, cores: Callable[[], int] = usable_cores,
                 sleep: Callable[[float], None] = time.sleep):
        self._busy, self._own, self._clock, self._cores, self._sleep = busy, own, clock, cores, sleep
        self._last: tuple[float, float, float] | None = None  # (wall, machine busy, own CPU) at the last reading

    def _reading(self) -> tuple[float, float, float] | None:
        busy = self._busy()
        return None if busy is None else (self._clock(), busy, self._own())

    def others_busy_cores(self) -> float | None:
        """The cores other processes kept busy since the last reading (None: not measurable here)."""
        if self._last is None:
            self._last = self._reading()
            if self._last is None:
                return None
            self._sleep(FIRST_SAMPLE_S)
        now = self._reading()
        if now is None:
            return None
        wall, busy, own = (after - before for after, before in zip(now, self._last, strict=True))
        self._last = now
        if wall <= 0:
            return None
        return max(0.0, (busy - own) / wall)

    def __call__(self) -> int:
        cores = self._cores()
        others = self.others_busy_cores()
        if others is None:
            return cores
        # a core counts as free when less than half of it is taken: 1.33 cores busy of two leave one
        return max(1, min(cores, int(cores - others + 0.5)))
