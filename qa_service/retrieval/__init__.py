"""Retrieval: the papers a question needs, dense and BM25 fused, names and authors found."""
