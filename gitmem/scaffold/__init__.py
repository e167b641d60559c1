"""Starting an agent: `init` from the template, and the offline `demo`."""
from __future__ import annotations

from importlib import resources
from pathlib import Path


def packaged_dir(shipped: str, checkout: str, what: str) -> Path:
    """`gitmem/<shipped>/` in the wheel (pyproject's force-include), or `<checkout>/` beside the package in a
    source checkout; FileNotFoundError naming `what` when neither is there."""
    inside = resources.files("gitmem") / shipped
    if inside.is_dir():
        return Path(str(inside))
    source = Path(__file__).resolve().parents[2] / checkout
    if source.is_dir():
        return source
    raise FileNotFoundError(f"the gitmem {what} are missing from this installation; reinstall gitmem-agent")
