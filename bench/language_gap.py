"""How far the embedder sets an English query from German text of the same meaning.

The e5 band (`kb/embedding/embedder.py`, E5_BAND) was measured with German section titles asked of German chunks. This
measures the same thing across languages with the glossary's term pairs (English term, its German term), not
with any question: each pair is asked, once in English and once in German, of a chunk whose heading holds the
German term and of a chunk drawn at random. Reads the chunk vectors an ingest stored. Usage:

    .venv/bin/python bench/language_gap.py --db /tmp/corpus-db [--pairs 2000]
"""

from __future__ import annotations

import argparse
import random
import re

import chromadb
import numpy as np

from rabbithole_lab.kb.kb_factory import shared_embedder
from rabbithole_lab.kb.store.index import get_all
from rabbithole_lab.language.bridge import glossary
from rabbithole_lab.settings import load_settings


def stored_chunks(db: str) -> list[tuple[str, np.ndarray]]:
    """(heading, vector) of every chunk in every collection of the index at `db`."""
    client = chromadb.PersistentClient(path=db)
    out = []
    for collection in client.list_collections():
        handle = client.get_collection(getattr(collection, "name", collection))
        got = get_all(handle, ["metadatas", "embeddings"])
        out += [((metadata or {}).get("heading", ""), np.asarray(vector))
                for metadata, vector in zip(got["metadatas"], got["embeddings"], strict=True)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--db", required=True, help="an index built with the default embedder")
    parser.add_argument("--pairs", type=int, default=2000, help="at most this many glossary pairs")
    args = parser.parse_args()
    embedder = shared_embedder(load_settings(env_file=None))
    chunks = stored_chunks(args.db)
    rng = random.Random(7)
    pairs = [(english, german[0]) for english, german in glossary().items() if len(german[0]) >= 5]
    rng.shuffle(pairs)
    rows = []
    for english, german in pairs[: args.pairs]:
        word = re.compile(r"\b" + re.escape(german.lower()))
        headed = [vector for heading, vector in chunks if word.search(heading.lower())]
        if not headed:
            continue
        own, other = rng.choice(headed), chunks[rng.randrange(len(chunks))][1]
        asked_en, asked_de = embedder.embed_query(english), embedder.embed_query(german)
        rows.append((own @ asked_en, other @ asked_en, own @ asked_de, other @ asked_de))
    table = np.array(rows)
    print(f"{len(rows)} glossary pairs whose German term heads a chunk ({embedder.name})")
    print("| query | to the chunk its German term heads | to a random chunk |")
    print("|---|---|---|")
    for name, (headed_column, random_column) in (("English term", (0, 1)), ("German term", (2, 3))):
        cells = [f"{np.median(table[:, c]):.3f} (p10 {np.percentile(table[:, c], 10):.3f}, "
                 f"p90 {np.percentile(table[:, c], 90):.3f})" for c in (headed_column, random_column)]
        print(f"| {name} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
