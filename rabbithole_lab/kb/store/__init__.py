"""The store: Chroma collections, their namespaces, the search files and the registry."""
