"""Two knowledge bases in one Chroma store never touch each other: embedded in one CHROMADB_PATH, and on a
real `chroma run` server through the installed `rabbithole` script. Collections from before namespaces
are adopted by the knowledge base whose documents they hold; search files never outlive the store
collection they were built from."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rabbithole_lab.kb.ingest.ingest import ingest
from rabbithole_lab.kb.kb_factory import open_index, open_knowledge_base
from rabbithole_lab.kb.store.index import IndexStoreError, UnknownCollectionError
from rabbithole_lab.kb.store.namespace import KB_ID_KEY, LEGACY_AUTO_REGISTRY, legacy_chroma_name

# written for these tests: two knowledge bases that both call their collection "Recht"
LIGHTHOUSE = ("§ 1 Leuchtfeuer\nDas Leuchtfeuer des Leuchtturms Nordkap wird jede Nacht von Sonnenuntergang bis "
              "Sonnenaufgang betrieben. Der Wärter prüft die Linse wöchentlich.\n\n"
              "§ 2 Nebelhorn\nBei Sichtweiten unter einer Seemeile ertönt das Nebelhorn alle dreißig Sekunden.\n")
MILL = ("§ 1 Mahlwerk\nDas Mahlwerk der Wassermühle Südtal darf nur bei einem Pegel über zwei Metern laufen. "
        "Der Müller schmiert die Achse monatlich.\n\n"
        "§ 2 Mehlsäcke\nMehlsäcke werden trocken gelagert und nach drei Monaten verbraucht.\n")
SCRIPT = Path(sys.executable).parent / "rabbithole"  # the installed console script


def _kb(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name / "Recht__db_inserted"
    folder.mkdir(parents=True)
    for filename, text in files.items():
        (folder / filename).write_text(text, encoding="utf-8")
    return root / name


@pytest.fixture()
def two_kbs(tmp_path) -> tuple[Path, Path]:
    return (_kb(tmp_path, "leuchtturm", {"nordkap.md": LIGHTHOUSE}),
            _kb(tmp_path, "muehle", {"suedtal.md": MILL}))


def _docs(kb) -> set[str]:
    return {doc for collection in kb.collections() for doc in kb.index.documents(collection)}


def test_two_knowledge_bases_with_one_collection_name_share_an_embedded_store(two_kbs, tmp_path, settings):
    lighthouse, mill = two_kbs
    store = tmp_path / "shared-store"
    ingest(lighthouse, open_index(settings, lighthouse, store), settings.kb, show_progress=False)
    second = ingest(mill, open_index(settings, mill, store), settings.kb, show_progress=False)
    assert not second.removed  # the mill's ingest leaves the lighthouse's documents alone

    first_kb, second_kb = open_knowledge_base(settings, lighthouse, store), open_knowledge_base(settings, mill, store)
    assert first_kb.collections() == second_kb.collections() == ["Recht"]
    assert _docs(first_kb) == {"nordkap.md"} and _docs(second_kb) == {"suedtal.md"}
    assert {hit.doc for hit in first_kb.search("Wassermühle Mahlwerk Pegel", k=5)} <= {"nordkap.md"}
    assert {hit.doc for hit in second_kb.search("Leuchtfeuer Nebelhorn", k=5)} <= {"suedtal.md"}
    assert first_kb.index.kb_id != second_kb.index.kb_id
    # nothing is written into a knowledge-base folder: the store's collections record which folder is whose
    assert sorted(p.relative_to(lighthouse).as_posix() for p in lighthouse.rglob("*")) == [
        "Recht__db_inserted", "Recht__db_inserted/nordkap.md"]
    assert first_kb.index.auto_registry_path != second_kb.index.auto_registry_path

    # a moved folder keeps its identity (its documents are in the collections of a folder that is gone), and
    # so its collections: an ingest there embeds nothing again and leaves the mill alone
    moved = tmp_path / "moved-leuchtturm"
    shutil.move(lighthouse, moved)
    assert _docs(open_knowledge_base(settings, moved, store)) == {"nordkap.md"}
    again = ingest(moved, open_index(settings, moved, store), settings.kb, show_progress=False)
    assert again.files_unchanged == 1 and not again.files_ingested and not again.removed
    assert open_index(settings, moved, store).kb_id == first_kb.index.kb_id
    assert _docs(open_knowledge_base(settings, mill, store)) == {"suedtal.md"}
    # the store opened without its folder: two knowledge bases, so it must be told which
    with pytest.raises(IndexStoreError, match="2 knowledge bases"):
        open_index(settings, None, store)


def test_a_store_opened_without_its_folder_reads_its_one_knowledge_base(two_kbs, tmp_path, settings):
    lighthouse, _ = two_kbs
    store = tmp_path / "store"
    ingest(lighthouse, open_index(settings, lighthouse, store), settings.kb, show_progress=False)
    searched = subprocess.run([str(SCRIPT), "--env-file", "none", "search", "Leuchtfeuer", "--db", str(store),
                               "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert searched.returncode == 0, searched.stderr[-2000:]
    assert {hit["doc"] for hit in json.loads(searched.stdout)} == {"nordkap.md"}


def _make_legacy(index, collection: str) -> None:
    """Turn a collection into what the code before namespaces wrote: its bare name, no kb_id, the search
    files under the bare name and one registry file for the whole store."""
    handle = index.client.get_collection(index.chroma_name(collection), embedding_function=None)
    metadata = {k: v for k, v in handle.metadata.items() if k != KB_ID_KEY and not k.startswith("hnsw:")}
    handle.modify(name=legacy_chroma_name(collection), metadata=metadata)
    os.replace(index.search_files_folder(collection), index.files.folder(legacy_chroma_name(collection)))
    os.replace(index.auto_registry_path, index.db_path / LEGACY_AUTO_REGISTRY)


def test_an_index_from_before_namespaces_is_adopted_by_the_knowledge_base_whose_documents_it_holds(
        two_kbs, tmp_path, settings, caplog):
    lighthouse, mill = two_kbs
    store = tmp_path / "old-store"
    ingest(lighthouse, open_index(settings, lighthouse, store), settings.kb, show_progress=False)
    _make_legacy(open_index(settings, lighthouse, store), "Recht")

    # the mill's knowledge base has a collection "Recht" too, but none of the old collection's documents
    mill_index = open_index(settings, mill, store)
    assert mill_index.collections() == [] and mill_index.legacy_collections() == ["Recht"]
    with pytest.raises(UnknownCollectionError, match="before knowledge bases were namespaced"):
        mill_index.count("Recht")

    with caplog.at_level(logging.INFO, logger="rabbithole_lab.kb.store.namespace"):
        adopted = open_index(settings, lighthouse, store)
    assert adopted.collections() == ["Recht"] and adopted.legacy_collections() == []
    assert "now carry this knowledge base's id" in caplog.text
    again = ingest(lighthouse, adopted, settings.kb, show_progress=False)
    assert again.chunks_added == 0 and again.files_unchanged == 1  # nothing parsed or embedded again
    assert {e.filename for e in open_knowledge_base(settings, lighthouse, store).registry.entries
            if e.source == "auto"} >= {"nordkap.md"}
    assert not (store / LEGACY_AUTO_REGISTRY).exists()
    hits = open_knowledge_base(settings, lighthouse, store).search("Nebelhorn Seemeile", k=3)
    assert hits and hits[0].doc == "nordkap.md"


def test_search_files_of_a_store_collection_that_was_made_again_are_rebuilt_with_a_warning(
        two_kbs, tmp_path, settings, caplog):
    lighthouse, _ = two_kbs
    store = tmp_path / "store"
    index = open_index(settings, lighthouse, store)
    ingest(lighthouse, index, settings.kb, show_progress=False)
    # another client deletes the collection and makes it again, with as many chunks but other text
    name = index.chroma_name("Recht")
    old = index.client.get_collection(name, embedding_function=None)
    got = old.get(include=["documents", "metadatas", "embeddings"])
    metadata = {k: v for k, v in old.metadata.items() if not k.startswith("hnsw:")}
    index.client.delete_collection(name)
    remade = index.client.create_collection(name, embedding_function=None, metadata=metadata)
    texts = [text.replace("Nebelhorn", "Glockenboje") for text in got["documents"]]
    remade.add(ids=got["ids"], documents=texts, metadatas=got["metadatas"], embeddings=got["embeddings"])

    with caplog.at_level(logging.WARNING):
        later = open_knowledge_base(settings, lighthouse, store)
        hits = later.search("Glockenboje", k=3, mode="bm25")
    assert hits and "Glockenboje" in hits[0].text  # never the stale files' text
    assert "built from a store collection that is gone" in caplog.text


# ---- a real Chroma server on loopback, through the installed script ---------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture()
def chroma_server(tmp_path):
    chroma = Path(sys.executable).parent / "chroma"
    if not chroma.exists() and not shutil.which("chroma"):
        pytest.skip("needs the `chroma` server script of the chromadb package (not installed here)")
    port = _free_port()
    data = tmp_path / "server-data"
    command = [str(chroma) if chroma.exists() else "chroma", "run", "--path", str(data), "--host", "127.0.0.1",
               "--port", str(port)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if time.time() > deadline or server.poll() is not None:
                server.kill()
                raise RuntimeError(f"chroma run did not start on port {port}") from None
            time.sleep(0.3)
    yield server, port
    server.kill()
    server.wait(timeout=30)


def _script(*args: str, port: int, cwd: Path, timeout_s: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port), "LLM_PROVIDER": "extractive"}
    return subprocess.run([str(SCRIPT), "--env-file", "none", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout_s)


@pytest.mark.server
def test_two_knowledge_bases_on_one_chroma_server(two_kbs, tmp_path, chroma_server):
    _, port = chroma_server
    lighthouse, mill = two_kbs
    for kb in (lighthouse, mill):
        done = _script("ingest", str(kb), "--no-progress", port=port, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "removed" not in done.stdout.replace("0 removed", "")

    def found(kb: Path, query: str) -> set[str]:
        result = _script("search", query, "--kb", str(kb), "--json", port=port, cwd=tmp_path)
        assert result.returncode == 0, result.stderr[-2000:]
        return {hit["doc"] for hit in json.loads(result.stdout)}

    assert found(lighthouse, "Leuchtfeuer Linse") == {"nordkap.md"}
    assert found(mill, "Leuchtfeuer Linse") == {"suedtal.md"}  # the mill's own, however poor a match

    # research on one knowledge base reads only its own collection
    out = tmp_path / "report"
    research = _script("research", "Wie oft prüft der Wärter die Linse des Leuchtfeuers?", "--kb", str(lighthouse),
                       "--no-hitl", "--out", str(out), "--no-progress", port=port, cwd=tmp_path)
    assert research.returncode == 0, research.stderr[-3000:]
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "nordkap.md" in report and "suedtal.md" not in report and "Mahlwerk" not in report


@pytest.mark.server
def test_a_chroma_server_killed_mid_research_ends_in_one_line(two_kbs, tmp_path, chroma_server):
    server, port = chroma_server
    lighthouse, _ = two_kbs
    assert _script("ingest", str(lighthouse), "--no-progress", port=port, cwd=tmp_path).returncode == 0
    env = {**os.environ, "CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port), "LLM_PROVIDER": "extractive"}
    research = subprocess.Popen([str(SCRIPT), "--env-file", "none", "research", "Wie oft prüft der Wärter die Linse?",
                                 "--kb", str(lighthouse), "--no-hitl", "--no-progress",
                                 "--sessions", str(tmp_path / "sessions.sqlite")],
                                cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert research.stdout is not None
    first_line = research.stdout.readline()  # "Reasoner: …": the knowledge base is open, research begins
    assert first_line
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=30)
    out, err = research.communicate(timeout=600)
    assert research.returncode not in (0, None)
    assert "Traceback" not in err
    error_lines = [line for line in err.splitlines() if line.lower().startswith("error")]
    assert 1 <= len(error_lines) <= 2 and len(err.splitlines()) < 10, err[-3000:]
    assert "--resume" in out + err  # the checkpoint is kept, and the user is told how to go on
    # what stopped answering is named, in the question's language
    assert any("Chroma" in line and f"http://127.0.0.1:{port}" in line for line in error_lines), err[-3000:]


@pytest.mark.server
def test_a_chroma_server_killed_mid_ingest_ends_in_one_line(tmp_path, chroma_server):
    server, port = chroma_server
    many = _kb(tmp_path, "viele", {f"merkblatt_{n:02}.md": f"§ 1 Merkblatt {n}\n" + MILL * 30 for n in range(40)})
    env = {**os.environ, "CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(port), "CHUNK_SIZE": "300",
           "CHUNK_OVERLAP": "0"}
    ingesting = subprocess.Popen([str(SCRIPT), "--env-file", "none", "ingest", str(many)], cwd=tmp_path, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert ingesting.stderr is not None
    os.set_blocking(ingesting.stderr.fileno(), False)
    seen = b""
    deadline = time.monotonic() + 300
    while b"Chunks" not in seen and ingesting.poll() is None and time.monotonic() < deadline:
        seen += ingesting.stderr.read(4096) or b""
        time.sleep(0.05)
    assert b"Chunks" in seen, seen[-2000:]  # the ingest is writing chunks to the server
    server.send_signal(signal.SIGKILL)
    server.wait(timeout=30)
    ingesting.wait(timeout=600)
    os.set_blocking(ingesting.stderr.fileno(), True)
    err = (seen + ingesting.stderr.read()).decode(errors="replace")
    assert ingesting.returncode == 2
    assert "Traceback" not in err
    errors = [line for line in err.replace("\r", "\n").splitlines() if line.startswith("error")]
    assert len(errors) == 1 and "run the command again" in errors[0], err[-2000:]
