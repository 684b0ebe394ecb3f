"""Ingest: folders and files parsed, chunked by section and written to the index."""
