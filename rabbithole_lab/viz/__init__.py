"""The followed reference graph (networkx -> pyvis) and tier tables (pandas)."""
