"""What an index embeds of its chunks.

A passage-id marker in a heading ("[PID 704b70fea119699c] 4.1 (Chapter 4 …)") is no language: sixteen hex
digits cost a fifth of a short passage's tokens and say nothing, so the embedder does not read it. A text met
again (a rulebook's "Used in …" side-bar repeats on many pages) is embedded once and remembered for a while.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from rabbithole_lab.kb.embedding.embedder import Embedder
from rabbithole_lab.kb.ingest.sections import embedding_text

RECENT_VECTORS = 4096  # vectors of texts embedded lately, by text (about 6 MB at 384 dimensions)


class ChunkEmbedding:
    def __init__(self, embedder: Embedder, remember: int = RECENT_VECTORS):
        self.embedder = embedder
        self.remember = remember
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    def __call__(self, texts: list[str]) -> np.ndarray:
        readable = [embedding_text(text) for text in texts]
        keys = [hashlib.sha1(text.encode()).hexdigest() for text in readable]
        todo = list(dict.fromkeys(key for key in keys if key not in self._recent))
        if todo:
            first = dict(zip(keys, readable, strict=True))  # one text per key: the key is its hash
            vectors = self.embedder.embed_documents([first[key] for key in todo])
            for key, vector in zip(todo, vectors, strict=True):
                self._recent[key] = vector
        rows = np.stack([self._recent[key] for key in keys])
        for key in keys:
            self._recent.move_to_end(key)
        while len(self._recent) > self.remember:
            self._recent.popitem(last=False)
        return rows
