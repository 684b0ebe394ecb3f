"""Retrieval over the store: query understanding, BM25 and hybrid search."""
