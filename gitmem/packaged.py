"""Where the files shipped with gitmem are: the template an agent starts from, and the plain git hooks.

The wheel carries them inside the package (pyproject's force-include); a source checkout has them beside it.
The cycle reads the template's prompt when a repository has none, and `init` copies the whole template: so
the locator sits below both.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

from gitmem import install_command


def packaged_dir(shipped: str, checkout: str, what: str) -> Path:
    """`gitmem/<shipped>/` in the wheel (pyproject's force-include), or `<checkout>/` beside the package in a
    source checkout; FileNotFoundError naming `what` when neither is there."""
    inside = resources.files("gitmem") / shipped
    if inside.is_dir():
        return Path(str(inside))
    source = Path(__file__).resolve().parents[1] / checkout     # gitmem/packaged.py -> the checkout's root
    if source.is_dir():
        return source
    raise FileNotFoundError(f"the gitmem {what} are missing from this installation; reinstall it: "
                            f"{install_command()}")


def template_dir() -> Path:
    """The template shipped in the wheel, or `template-repo/` beside the package in a source checkout."""
    return packaged_dir("_template", "template-repo", "template files")
