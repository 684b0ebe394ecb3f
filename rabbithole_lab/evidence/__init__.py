"""Views over the evidence of a run: page positions, source links, findings, the references counted once."""
