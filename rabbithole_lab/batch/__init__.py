"""Unattended runs: batches of questions through the packaged report notebook (papermill)."""
