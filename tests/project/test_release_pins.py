"""The project's address, version and pinned ref live in one place (gitmem/__init__.py); every copy agrees
with it, and the CHANGELOG says the same about whether this version is released.

Run `python tests/project/test_release_pins.py` after editing REPOSITORY, __version__, PINNED_REF or PINNED_COMMIT to
rewrite the copies (docs/releasing.md).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

if __name__ == "__main__":       # run as a script: make `tests.support` importable from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import pytest

import gitmem
import gitmem.scaffold.init as gitmem_init
from tests.support.release import ROOT, rewrite, stale, the_one_place


@pytest.fixture(scope="module")
def project() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def test_every_copy_of_the_address_and_version_agrees_with_the_one_place() -> None:
    assert stale() == [], "run `python tests/project/test_release_pins.py` to rewrite them"


def test_the_one_place_is_what_the_package_reports() -> None:
    assert the_one_place() == (gitmem.REPOSITORY, gitmem.__version__, gitmem.PINNED_REF, gitmem.PINNED_COMMIT)


def test_the_template_pins_gitmem_at_the_tagged_commit_and_nothing_else() -> None:
    """Every pin of gitmem in the template is the commit of `v<version>` with the tag in a comment: pre-commit
    warns on a moving `rev:` (a branch) at every commit, and an action pinned by a branch runs whatever the
    branch holds next with the workflow's write token and API key."""
    base = gitmem_init.template_dir()
    ours = re.compile(rf"(?:rev: |{re.escape(gitmem.REPOSITORY)}@)(\S+)(.*)$", re.M)
    pins = {(rel, pin, rest.strip()) for rel in gitmem_init.template_files() if rel.endswith((".yaml", ".yml"))
            for pin, rest in ours.findall((base / rel).read_text("utf-8"))}
    tag = f"v{gitmem.__version__}"
    assert {(pin, rest) for _, pin, rest in pins} <= {(gitmem.PINNED_COMMIT, f"# {tag}"),
                                                      (gitmem.PINNED_COMMIT, f"# frozen: {tag}")}
    assert re.fullmatch(r"[0-9a-f]{40}", gitmem.PINNED_COMMIT)
    assert {rel for rel, _, _ in pins} == {".pre-commit-config.yaml", ".github/workflows/gitmem.yml",
                                           ".github/workflows/gitmem-check.yml"}


def test_the_fleet_template_installs_gitmem_at_the_tagged_commit() -> None:
    """The fleet's workflow runs gitmem with the token that reads the private agents, the one that starts their
    workflows and `contents: write`: installed from a branch, it would run whatever the branch holds next."""
    workflow = (ROOT / "template-fleet" / ".github" / "workflows" / "fleet.yml").read_text(encoding="utf-8")
    pins = re.findall(rf"git\+https://github\.com/{re.escape(gitmem.REPOSITORY)}@([^'\s]+)'(.*)$", workflow, re.M)
    assert pins == [(gitmem.PINNED_COMMIT, f"  # v{gitmem.__version__}")]


def test_the_template_silences_no_linter_for_what_a_user_adds() -> None:
    """zizmor's unpinned-uses warning stays alive in the user's own files: no ignore comment, no config."""
    base = gitmem_init.template_dir()
    silenced = [rel for rel in gitmem_init.template_files() if "zizmor" in rel
                or (rel.endswith((".yml", ".yaml")) and "zizmor: ignore" in (base / rel).read_text("utf-8"))]
    assert silenced == []


def test_the_pinned_commit_is_in_this_history_and_the_tag_names_it() -> None:
    """A commit the template pins must exist where the template's users fetch it: here it is an ancestor of the
    checkout (the release step pins a commit already on main). Once `v<version>` is tagged in this checkout, it
    names that commit: a release that forgot to pin its tag's commit fails here."""
    import pygit2

    try:
        repo = pygit2.Repository(str(ROOT))
    except pygit2.GitError:
        pytest.skip("not a git checkout")
    if repo.is_shallow:
        pytest.skip("a shallow clone holds no history to look the pinned commit up in")
    pinned = repo.get(gitmem.PINNED_COMMIT)
    assert isinstance(pinned, pygit2.Commit), f"{gitmem.PINNED_COMMIT} is not a commit of this repository"
    assert repo.descendant_of(repo.head.target, pinned.id) or repo.head.target == pinned.id
    tag = repo.references.get(f"refs/tags/v{gitmem.__version__}")
    if tag is not None:
        assert str(tag.peel(pygit2.Commit).id) == gitmem.PINNED_COMMIT, "run the release's pin step"


def test_the_pinned_commit_accepts_the_template_it_is_pinned_in() -> None:
    """The hooks and the action the template pins run the pinned commit's gitmem on the template's gitmem.yaml:
    a `rules_version` newer than that commit knows is a config error at every commit (tests/checks/test_upgrade.py), so
    a release that raises the rules pins a commit that has them."""
    import pygit2

    try:
        repo = pygit2.Repository(str(ROOT))
    except pygit2.GitError:
        pytest.skip("not a git checkout")
    pinned = repo.get(gitmem.PINNED_COMMIT)
    if pinned is None:
        pytest.skip("a shallow clone holds no history to look the pinned commit up in")
    codes_then = pinned.peel(pygit2.Commit).tree / "gitmem" / "codes.py"
    known = int(re.search(r"^RULES_VERSION = (\d+)$", codes_then.data.decode("utf-8"), re.M).group(1))
    config = (gitmem_init.template_dir() / "gitmem.yaml").read_text("utf-8")
    asked = int(re.search(r"^rules_version: (\d+)", config, re.M).group(1))
    assert asked <= known, f"the template asks rules {asked}; the pinned {gitmem.PINNED_COMMIT[:12]} knows {known}"


def test_the_pinned_ref_exists_whenever_the_changelog_says_so() -> None:
    """A tag that is not published installs nothing. Until the CHANGELOG dates this version (its section says
    `unreleased`), every install line and pin names the branch releases are cut from; once it is dated, the
    tag it links to, `v<version>`. Either way the one place, the CHANGELOG and the link agree."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    version = gitmem.__version__
    heading = re.search(rf"^## \[{re.escape(version)}\] - (.+)$", text, re.M)
    assert heading, f"CHANGELOG.md has no section for {version}"
    tag = f"v{version}"
    assert f"[{version}]: https://github.com/{gitmem.REPOSITORY}/releases/tag/{tag}\n" in text
    if heading.group(1) == "unreleased":
        assert gitmem.PINNED_REF == "main"
    else:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", heading.group(1)), "a released version's section is dated"
        assert gitmem.PINNED_REF == tag


def test_every_install_line_is_the_one_install_spec_and_pip_can_read_it(project: dict) -> None:
    """What `pip install` is told is a PEP 508 direct reference to this project at the pinned ref."""
    from packaging.requirements import Requirement

    parsed = Requirement(gitmem.install_spec("agent"))
    assert (parsed.name, parsed.extras) == (project["name"], {"agent"})
    assert parsed.url == f"git+https://github.com/{gitmem.REPOSITORY}@{gitmem.PINNED_REF}"
    assert set(project["optional-dependencies"]) >= {"agent", "agents", "semantic"}
    for hook in ("pre-commit", "pre-push"):
        assert gitmem.install_command() in (ROOT / "hooks" / hook).read_text(encoding="utf-8")
    assert gitmem.install_command() in (ROOT / "README.md").read_text(encoding="utf-8")


def test_no_install_hint_names_a_package_no_index_has() -> None:
    """`pip install gitmem-agent` (with or without an extra) installs nothing: no index has it. Every install
    line in the docs, the template, the hooks and the code is the git URL (gitmem.install_command)."""
    bare = re.compile(r"pip install (?:-\S+ )*'?gitmem-agent(?:\[[\w,-]+\])?+(?! @ git\+)")
    places = [ROOT / "README.md", ROOT / "action.yml", *sorted((ROOT / "docs").glob("*.md")),
              *sorted((ROOT / "hooks").iterdir()), *sorted((ROOT / "gitmem").rglob("*.py")),
              *(path for path in sorted((ROOT / "template-repo").rglob("*")) if path.is_file())]
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path in places
             for match in bare.finditer(path.read_text(encoding="utf-8"))]
    assert found == []


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
                    .replace(f'__version__ = "{gitmem.__version__}"', '__version__ = "1.2.3"')
                    .replace(f'PINNED_REF = "{gitmem.PINNED_REF}"', 'PINNED_REF = "v1.2.3"')
                    .replace(gitmem.PINNED_COMMIT, "1" * 40), encoding="utf-8")
    monkeypatch.setattr(release, "ROOT", tmp_path)
    assert release.stale()                       # every copy is now stale
    changed = release.rewrite()
    assert release.stale() == []
    assert set(changed) == {copy.path for copy in release.COPIES}
    precommit = (tmp_path / "template-repo" / ".pre-commit-config.yaml").read_text(encoding="utf-8")
    assert f"repo: https://github.com/acme/gitmem-fork\n    rev: {'1' * 40}  # frozen: v1.2.3\n" in precommit
    flow = (tmp_path / "template-repo" / ".github" / "workflows" / "gitmem.yml").read_text(encoding="utf-8")
    assert flow.count(f"uses: acme/gitmem-fork@{'1' * 40} # v1.2.3\n") == 3
    assert "actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1" in flow    # third-party pins untouched
    before = (ROOT / "README.md").read_text(encoding="utf-8")
    after = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert after.replace("acme/gitmem-fork", gitmem.REPOSITORY).replace("@v1.2.3", f"@{gitmem.PINNED_REF}") \
        .replace(f"@{'1' * 40} # v1.2.3", f"@{gitmem.PINNED_COMMIT} # v{gitmem.__version__}") == before
    hook = (tmp_path / "hooks" / "pre-push").read_text(encoding="utf-8")
    assert "pip install 'gitmem-agent @ git+https://github.com/acme/gitmem-fork@v1.2.3'" in hook


def test_the_changelog_has_a_section_for_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(gitmem.__version__)}\]", text, re.M)


if __name__ == "__main__":
    for path in rewrite():
        print(f"rewrote {path}")
    left = stale()
    print("\n".join(left) if left else "every copy agrees with gitmem/__init__.py")
    sys.exit(1 if left else 0)
