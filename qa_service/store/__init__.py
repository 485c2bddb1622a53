"""The store: ChromaDB (embedded or a server), BM25, the manifest and ledger, locks, check and repair."""
