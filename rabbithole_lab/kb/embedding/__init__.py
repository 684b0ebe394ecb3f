"""Embedding: the Embedder contract, its two backends and the vectors kept on disk."""
