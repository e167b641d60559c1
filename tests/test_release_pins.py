"""The project's address and version live in one place (gitmem/__init__.py); every copy agrees with it.

Run `python tests/test_release_pins.py` after editing REPOSITORY or __version__ to rewrite the copies.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

if __name__ == "__main__":       # run as a script: make `tests.support` importable from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gitmem
import gitmem.scaffold.init as gitmem_init
from tests.support.release import ROOT, rewrite, stale, the_one_place


def test_every_copy_of_the_address_and_version_agrees_with_the_one_place() -> None:
    assert stale() == [], "run `python tests/test_release_pins.py` to rewrite them"


def test_the_one_place_is_what_the_package_reports() -> None:
    assert the_one_place() == (gitmem.REPOSITORY, gitmem.__version__)


def test_the_template_pins_this_release_and_nothing_else() -> None:
    """Every tag-style pin in the template names the version being shipped, or new agents run old code."""
    base = gitmem_init.template_dir()
    pins = {(rel, pin) for rel in gitmem_init.template_files() if rel.endswith((".yaml", ".yml"))
            for pin in re.findall(r"(?:rev: |[\w.-]+/[\w.-]+@)(v\d[\w.]*)", (base / rel).read_text("utf-8"))}
    version = f"v{gitmem.__version__}"
    assert {pin for _, pin in pins} == {version}
    assert {rel for rel, _ in pins} == {".pre-commit-config.yaml", ".github/workflows/gitmem.yml",
                                        ".github/workflows/gitmem-check.yml"}


def test_a_release_edits_one_place_and_the_rewrite_follows(tmp_path: Path, monkeypatch) -> None:
    """Copy the files with copies, change REPOSITORY and __version__ in the copy of gitmem/__init__.py only,
    and the script's rewrite brings every copy in step (and nothing else in those files moves)."""
    from tests.support import release

    for path in {copy.path for copy in release.COPIES} | {"gitmem/__init__.py"}:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_bytes((ROOT / path).read_bytes())
    init = tmp_path / "gitmem" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    init.write_text(text.replace(f'REPOSITORY = "{gitmem.REPOSITORY}"', 'REPOSITORY = "acme/gitmem-fork"')
                    .replace(f'__version__ = "{gitmem.__version__}"', '__version__ = "1.2.3"'), encoding="utf-8")
    monkeypatch.setattr(release, "ROOT", tmp_path)
    assert release.stale()                       # every copy is now stale
    changed = release.rewrite()
    assert release.stale() == []
    assert set(changed) == {copy.path for copy in release.COPIES}
    precommit = (tmp_path / "template-repo" / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert "repo: https://github.com/acme/gitmem-fork\n    rev: v1.2.3\n" in precommit
    flow = (tmp_path / "template-repo" / ".github" / "workflows" / "gitmem.yml").read_text(encoding="utf-8")
    assert flow.count("uses: acme/gitmem-fork@v1.2.3") == 3
    assert "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1" in flow    # third-party pins untouched
    before = (ROOT / "README.md").read_text(encoding="utf-8")
    after = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert after.replace("acme/gitmem-fork", gitmem.REPOSITORY).replace("@v1.2.3", f"@v{gitmem.__version__}") \
        == before


def test_the_changelog_has_a_section_for_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(gitmem.__version__)}\]", text, re.M)


if __name__ == "__main__":
    for path in rewrite():
        print(f"rewrote {path}")
    left = stale()
    print("\n".join(left) if left else "every copy agrees with gitmem/__init__.py")
    sys.exit(1 if left else 0)
