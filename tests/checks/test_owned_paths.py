"""GM908 over every path gitmem owns (gitmem.checks.owned_paths): `check` refuses a staged change that makes one a
link, a submodule or the wrong kind, or a folder on the way to it so; `verify` holds commits made under rules 6 to
the same, and older history verifies as before. Real repositories, real `git add` of real links."""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from tests.support.gitcli import git
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]


def _stage_link(repo: GitRepo, rel: str, target: str) -> None:
    where = repo.path / rel
    where.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, where)
    git(repo.path, "add", rel)


def _moved_out_and_linked(repo: GitRepo, rel: str, away: Path) -> None:
    """The tracked folder `rel` moved to `away`, and a link to it staged in its place."""
    git(repo.path, "rm", "-q", "-r", "--cached", rel)
    os.rename(repo.path / rel, away)
    _stage_link(repo, rel, str(away))


def test_a_staged_link_in_place_of_the_volume_folder_is_gm908(memrepo: GitRepo, cli: Cli, tmp_path: Path) -> None:
    # A project's own file in the folder, and a link gitmem does not own, pass as before.
    memrepo.write("history/2019-migration.md", "# The 2019 migration\n")
    _stage_link(memrepo, "docs/README.md", "../README.md")
    git(memrepo.path, "add", "-A")
    assert cli(["check"], cwd=memrepo.path).code == 0
    git(memrepo.path, "commit", "-q", "-m", "the project's own history")
    _moved_out_and_linked(memrepo, "history", tmp_path / "history")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert ("history:1: GM908 history is a symbolic link; gitmem writes LOG's sealed volumes there, so it must be a "
            "plain folder (or missing)") in result.out
    assert "git rm --cached history" in result.out


def test_a_staged_file_or_submodule_in_place_of_the_volume_folder_is_gm908(memrepo: GitRepo, cli: Cli) -> None:
    memrepo.write("history", "not a folder\n")
    git(memrepo.path, "add", "history")
    assert "history:1: GM908 history is a file; gitmem writes LOG's sealed volumes there" in cli(
        ["check"], cwd=memrepo.path).out
    git(memrepo.path, "rm", "-q", "--cached", "history")
    (memrepo.path / "history").unlink()
    head = git(memrepo.path, "rev-parse", "HEAD").strip()
    git(memrepo.path, "update-index", "--add", "--cacheinfo", f"160000,{head},history")
    assert "history:1: GM908 history is a submodule" in cli(["check"], cwd=memrepo.path).out


def test_a_link_on_the_way_to_a_file_gitmem_installs_is_gm908(memrepo: GitRepo, cli: Cli, tmp_path: Path) -> None:
    _moved_out_and_linked(memrepo, ".github", tmp_path / "github")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert (".github:1: GM908 .github is a symbolic link, on the way to .github/workflows/gitmem.yml, which gitmem "
            "owns") in result.out


def test_a_prompt_made_a_link_is_gm908(memrepo: GitRepo, cli: Cli) -> None:
    git(memrepo.path, "rm", "-q", "--cached", "prompts/close.md")
    (memrepo.path / "prompts" / "close.md").unlink()
    _stage_link(memrepo, "prompts/close.md", "cycle.md")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert "prompts/close.md:1: GM908 prompts/close.md is a symbolic link; gitmem reads or installs it" in result.out


def test_a_submodule_on_the_way_that_was_one_before_passes_check_when_bumped(
        memrepo: GitRepo, cli: Cli, tmp_path: Path) -> None:
    """`.github` as a submodule (workflows shared across an organisation) is refused when a change makes it one;
    once committed, an ordinary bump of it is no change of kind and passes."""
    shared = tmp_path / "shared-workflows"
    shared.mkdir()
    git(shared, "init", "-q", "-b", "main")
    os.rename(memrepo.path / ".github" / "workflows", shared / "workflows")
    git(shared, "add", "-A")
    git(shared, "commit", "-q", "-m", "the organisation's workflows")
    git(memrepo.path, "rm", "-q", "-r", "--cached", ".github")
    (memrepo.path / ".github").rmdir()
    git(memrepo.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(shared), ".github")
    made = cli(["check"], cwd=memrepo.path)
    assert made.code == 1
    assert ".github:1: GM908 .github is a submodule, on the way to .github/workflows/gitmem.yml" in made.out
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", ".github from the organisation")
    inner = memrepo.path / ".github"
    (inner / "workflows" / "lint.yml").write_text("name: lint\n")
    git(inner, "add", "-A")
    git(inner, "commit", "-q", "-m", "a lint workflow")
    git(memrepo.path, "add", ".github")
    assert git(memrepo.path, "diff", "--cached", "--name-only").split() == [".github"]
    bumped = cli(["check"], cwd=memrepo.path)
    assert bumped.code == 0, bumped.out
    assert "GM908" not in bumped.out


def test_a_link_retargeted_passes_check_and_one_made_another_wrong_kind_does_not(
        memrepo: GitRepo, cli: Cli) -> None:
    """A `.gitignore` link the human committed stays a link when pointed elsewhere: not judged again. Made a
    submodule, it becomes a kind it was not, and that is judged as any change that makes one."""
    memrepo.write("ignore/common", "*.log\n")
    memrepo.write("ignore/strict", "*.log\n*.tmp\n")
    git(memrepo.path, "add", "ignore")
    git(memrepo.path, "rm", "-q", "--cached", ".gitignore")
    (memrepo.path / ".gitignore").unlink()
    _stage_link(memrepo, ".gitignore", "ignore/common")
    assert "GM908 .gitignore is a symbolic link" in cli(["check"], cwd=memrepo.path).out
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", ".gitignore from the shared set")
    (memrepo.path / ".gitignore").unlink()
    _stage_link(memrepo, ".gitignore", "ignore/strict")
    retargeted = cli(["check"], cwd=memrepo.path)
    assert retargeted.code == 0, retargeted.out
    assert "GM908" not in retargeted.out
    git(memrepo.path, "rm", "-q", "--cached", ".gitignore")
    head = git(memrepo.path, "rev-parse", "HEAD").strip()
    git(memrepo.path, "update-index", "--add", "--cacheinfo", f"160000,{head},.gitignore")
    made_submodule = cli(["check"], cwd=memrepo.path)
    assert made_submodule.code == 1
    assert ".gitignore:1: GM908 .gitignore is a submodule" in made_submodule.out


def test_verify_holds_commits_made_under_rules_6_to_it_and_older_ones_as_before(
        memrepo: GitRepo, cli: Cli, tmp_path: Path) -> None:
    """A link committed under rules 5 verifies as before, and `check` does not report it again; one committed under
    rules 6 is GM908 in `verify`."""
    config = memrepo.read("gitmem.yaml")
    assert "rules_version: 6" in config
    memrepo.commit_files({"gitmem.yaml": config.replace("rules_version: 6", "rules_version: 5")}, "rules 5")
    base = git(memrepo.path, "rev-parse", "HEAD").strip()
    _stage_link(memrepo, "history", str(tmp_path))
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", "history as a link, under rules 5")
    memrepo.commit_files({"gitmem.yaml": config}, "rules 6")
    git(memrepo.path, "rm", "-q", "--cached", "prompts/close.md")
    (memrepo.path / "prompts" / "close.md").unlink()
    _stage_link(memrepo, "prompts/close.md", "cycle.md")
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", "a prompt as a link, under rules 6")
    memrepo.write("notes.md", "an unrelated change\n")
    git(memrepo.path, "add", "notes.md")
    assert cli(["check"], cwd=memrepo.path).code == 0
    result = cli(["verify", "--range", f"{base}..HEAD"], cwd=memrepo.path)
    assert result.code == 1
    assert "prompts/close.md:1: GM908 prompts/close.md is a symbolic link" in result.out
    assert "history:1:" not in result.out


def test_every_file_the_template_installs_is_owned_but_its_readme() -> None:
    """`owned_paths.INSTALLED` and the prompts are kept in step with the template: a file added there is owned."""
    from gitmem.checks.owned_paths import owned_paths
    from gitmem.config import Config
    from gitmem.packaged import template_dir

    template = template_dir()
    shipped = {str(path.relative_to(template)) for path in template.rglob("*") if path.is_file()}
    owned = {item.path for item in owned_paths(Config())}
    assert shipped - owned == {"README.md"}
    assert {item.path for item in owned_paths(Config()) if item.kind == "folder"} == {"history"}
