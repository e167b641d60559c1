"""Cline's memory bank: `memory-bank/*.md` in the project (docs.cline.bot, "Memory Bank": projectbrief.md,
productContext.md, activeContext.md, systemPatterns.md, techContext.md, progress.md, and any others). Free
markdown: each bullet item and each paragraph is a fact about the project, and lands as a proposal."""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gitmem.interop.facts import PROPOSAL, Fact
from gitmem.interop.shapes import blocks
from gitmem.interop.sources import Reader
from gitmem.workspace import Workspace

NAME = "cline"
WHAT = "Cline memory bank"


def default_roots(workspace: Workspace, environ: Mapping[str, str], home: Path) -> list[Path]:
    return [workspace.root / "memory-bank"]


def read(reader: Reader, prefix: str) -> list[Fact]:
    facts = []
    for name in reader.markdown_in():
        loaded = reader.read(name)
        if loaded is not None:
            facts += [Fact(NAME, f"{prefix}/{name}", block.line, block.text, PROPOSAL, loaded.written)
                      for block in blocks(loaded.text)]
    return facts
