"""Recall: search the whole memory history (LOG, lessons, decisions, NOW, rules, commits) in milliseconds.

`gitmem.recall.search(root, config, query, limit=...)` is the one engine behind `gitmem recall` and the
agent's `recall` tool. The index is a disposable SQLite FTS5 cache under `.git/gitmem/`; the markdown in
git stays the only source of truth.
"""
from __future__ import annotations

from gitmem.recall.database import RecallError
from gitmem.recall.rank import register_ranker
from gitmem.recall.search import Hit, rebuild, search

__all__ = ["Hit", "RecallError", "rebuild", "register_ranker", "search"]
