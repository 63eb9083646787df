"""Embedding: sentence-transformers models (the bundled default and any other by name or path),
one unit vector per response or token vectors for late interaction, long answers cut or read
in windows, precomputed .npy files, and the one shared representation of blank answers
(`blank`); the embedding cache (the answer cache, one verified entry per distinct text in
SQLite, and earlier versions' whole-list entries) in `cache`.

Produces an `Embedded`: (N, d) unit vectors or `TokenEmbeddings`, with the `EmbeddingFacts` of
how they were made. May import engine.input, engine.cluster (where a run's scheduler is) and
engine.core. torch and sentence-transformers are imported inside functions, only when a run
embeds.
"""
