"""The extractive answer writer: sentences ranked, the decisive provision scored, the answer composed."""
