"""Exit codes, one meaning each across all commands. Documented in `gitmem --help` and the README."""
from __future__ import annotations

OK = 0                # clean / done
VIOLATIONS = 1        # memory format violations found, or a write refused as invalid
USAGE = 2             # bad arguments, bad config, not a git repository
DIRTY = 3             # the cycle refused to start: uncommitted changes, a held lock, or invalid memory
SALVAGED = 4          # the cycle failed or could not push; its work is safe on a named branch
REWRITTEN = 5         # `verify`: the range is not a descendant (history was rewritten)

HELP = (
    "Exit codes: 0 ok; 1 violations; 2 usage or config error; 3 cycle refused to start (dirty tree, lock, "
    "invalid memory); 4 cycle failed or conflicted, work saved on a branch; 5 history rewritten."
)
