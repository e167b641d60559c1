"""Read-only views of memory for people: `status` and `pending`, and what a command shows on a GitHub Actions run
(actions.py)."""
