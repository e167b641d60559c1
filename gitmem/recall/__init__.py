"""Recall: search the whole memory history (LOG, lessons, decisions, NOW, rules, commits) in milliseconds.

`gitmem.recall.search(ws, query, ...)` is the one engine behind `gitmem recall` and the agent's `recall`
tool: by words (SQLite FTS5, BM25), by meaning (a static embedding model and a vector store), or both,
fused (search.py says how the mode is chosen). Both indexes are disposable caches under `.git/gitmem/`;
the markdown in git stays the only source of truth.
"""
from __future__ import annotations

from gitmem.recall.database import RecallError
from gitmem.recall.rank import register_ranker
from gitmem.recall.search import Hit, Hits, rebuild, rebuild_size, search

__all__ = ["Hit", "Hits", "RecallError", "rebuild", "rebuild_size", "register_ranker", "search"]
