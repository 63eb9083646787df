"""Embedding: sentence-transformers models (the bundled default and any other by name or path),
one unit vector per response or token vectors for late interaction, long answers cut or read
in windows, the answer cache (one verified entry per distinct text, SQLite) and earlier
versions' whole-list entries, precomputed .npy files, and the one shared representation of
blank answers (`blank`).

Produces an `Embedded`: (N, d) unit vectors or `TokenEmbeddings`, with the `EmbeddingFacts` of
how they were made. May import engine.input and engine.core.
torch and sentence-transformers are imported inside functions, only when a run embeds.
"""
