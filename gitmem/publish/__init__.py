"""Getting memory commits to the remote: push with rebase, memory-aware merges, pull-request mode."""
