"""Upstream commits that arrived while a cycle ran and changed DECISIONS: who answered, as far as git says.

An agent that can write the remote itself (a local-path origin, credentials left in its environment) can push
a commit that answers a decision under the human's name, and the cycle would then build on it. A human may
answer mid-cycle too, so such commits are not refused; they are named (short id, author, subject) in the
cycle's Evidence and output, for the human to confirm they are theirs.
"""
from __future__ import annotations

from gitmem import gitio

SHOWN = 5          # commits named one by one; more are counted


def decisions_arrived(repo: gitio.Repo, since: str, upstream: str, path: str) -> list[gitio.Commit]:
    """Commits in `since`..`upstream` whose DECISIONS (`path`) differs from each of their parents'."""
    found: list[gitio.Commit] = []
    for commit in gitio.walk_range(repo, since, upstream):
        mine = gitio.file_id_at(repo, commit.id, path)
        if all(gitio.file_id_at(repo, parent, path) != mine for parent in commit.parents):
            found.append(commit)
    return found


def describe_arrivals(commits: list[gitio.Commit], where: str, path: str) -> str:
    """One line for Evidence: the commits, and why they are named."""
    named = "; ".join(f"{c.short} by {c.author} \"{c.subject[:80]}\"" for c in commits[:SHOWN])
    more = f"; and {len(commits) - SHOWN} more" if len(commits) > SHOWN else ""
    return (f"{len(commits)} commit(s) changing {path} arrived on {where} while the cycle ran: {named}{more}. "
            "The cycle builds on them; if they are not a human's answers, the agent may have written the remote "
            "directly: check who made them")
