"""The embedding cache in the cache folder (engine.core.places.cache_dir): the answer cache, one
verified vector or token matrix per distinct answer text in one SQLite database (`answers`),
the whole-list entries of earlier versions and of token vectors (`entries`), what one embedding
call finds there and adds (`run_cache.RunCache`), and what the cache holds and emptying it
(`contents`, `parm cache`).

May import engine.embedding's model identity and reading plan (models, reading), engine.input
and engine.core.
"""
