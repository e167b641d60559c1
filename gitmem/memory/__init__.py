"""Parse and render the five memory files. Pure text in, typed entries with line numbers out; no git, no I/O."""
from __future__ import annotations
