"""`gitmem init`: creates what is missing, never overwrites, merges pre-commit hooks idempotently."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest
from ruamel.yaml import YAML

import gitmem
import gitmem.scaffold.init as gitmem_init
from gitmem.checks.check_and_verify import verify_range
from gitmem.cli import main
from gitmem.errors import ExitCode
from gitmem.workspace import Workspace
from tests.support.helpers import HUMAN

PRE_COMMIT = str(Path(sys.executable).parent / "pre-commit")
GIT_ENV = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_OBJECT_DIRECTORY", "GIT_CEILING_DIRECTORIES")

USER_CONFIG = """\
# Our hooks. Keep this comment.
default_language_version:
  python: python3.11   # pinned on purpose
repos:
# linters first
- repo: https://github.com/pre-commit/pre-commit-hooks
  rev: v4.6.0
  hooks:
  - id: trailing-whitespace
    args: ['--markdown-linebreak-ext=md']   # quoted, with odd spacing
  - id: end-of-file-fixer

# formatting
- repo: https://github.com/psf/black
  rev: 24.1.0
  hooks:
  - id: black
    exclude: ^(some/very/long/path/that/goes/on/and/on/for/a/while|another/very/long/path/that/also/goes/on)/
# a trailing comment about ci

ci:
  autofix_prs: false
"""


@pytest.fixture(autouse=True)
def _clean_git_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A test run from inside a git hook would otherwise point pygit2 at the outer repository.
    for name in GIT_ENV:
        monkeypatch.delenv(name, raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def expected_files() -> list[str]:
    return [rel for rel in gitmem_init.template_files() if rel not in gitmem_init.NOT_COPIED]


def snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def hook_ids(config_text: str) -> list[tuple[str, list[str]]]:
    data = YAML(typ="safe").load(config_text)
    return [(repo["repo"], [hook["id"] for hook in repo["hooks"]]) for repo in data["repos"]]


def test_init_into_empty_dir_creates_everything_and_a_commit_passes_check(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "agent"
    code, out, _ = run(capsys, "init", str(target))
    assert code == ExitCode.OK
    assert out.splitlines()[0] == f"initialised a git repository in {target}"
    assert [line.split()[1] for line in out.splitlines() if line.startswith("created")] == expected_files()
    assert "left alone" not in out
    base = gitmem_init.template_dir()
    for rel in expected_files():
        assert (target / rel).read_bytes() == (base / rel).read_bytes(), rel
    assert not (target / "README.md").exists()  # the template's own README is not scaffolding
    repo = pygit2.Repository(str(target))
    assert repo.head_is_unborn and repo.references.get("HEAD").target == "refs/heads/main"

    monkeypatch.chdir(target)
    assert run(capsys, "check", "--worktree") == (ExitCode.OK, "", "")
    repo.config["user.name"], repo.config["user.email"] = HUMAN
    repo.index.add_all()
    repo.index.write()
    assert run(capsys, "check") == (ExitCode.OK, "", "")
    tree = repo.index.write_tree()
    signature = pygit2.Signature(*HUMAN)
    repo.create_commit("HEAD", signature, signature, "Start the agent", tree, [])
    assert sorted(e.path for e in repo.index) == sorted([*expected_files(), ".gitattributes"])   # merge driver
    assert verify_range(Workspace.at(target), None, "HEAD").violations == []
    assert run(capsys, "check") == (ExitCode.OK, "", "")
    assert run(capsys, "check", "--worktree") == (ExitCode.OK, "", "")


def test_init_never_overwrites_and_reports_left_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pygit2.init_repository(str(tmp_path))
    mine = {}
    for rel in expected_files():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel == gitmem_init.PRECOMMIT:
            # Already has the gitmem hooks (from a local checkout), so nothing may change.
            content = (b"repos:\n- repo: local\n  hooks:\n  - {id: gitmem-check, name: c, entry: gitmem check,"
                       b" language: system}\n"
                       b"  - {id: gitmem-verify, name: v, entry: gitmem verify, language: system}\n")
        elif rel == gitmem_init.GITIGNORE:
            # Already ignores everything the template does (as directories or not), so nothing may change.
            wanted = [line for line in (gitmem_init.template_dir() / rel).read_bytes().splitlines()
                      if line and not line.startswith(b"#")]
            content = b"my own\r\n" + b"\r\n".join(w.rstrip(b"/") for w in wanted) + b"\r\n\xff"
        elif rel == "gitmem.yaml":
            content = b"# my own gitmem.yaml: all defaults\r\n"
        else:
            content = f"my own {rel}\r\n\xff".encode("latin-1")
        path.write_bytes(content)
        mine[rel] = content
    monkeypatch.setenv("PATH", str(Path(PRE_COMMIT).parent))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.OK
    assert snapshot(tmp_path) == mine
    assert out.splitlines() == [*(f"left alone  {rel} (exists)" for rel in expected_files()),
                                "next: pre-commit install --hook-type pre-commit --hook-type pre-push"]


def test_init_creates_only_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pygit2.init_repository(str(tmp_path))
    (tmp_path / "NOW.md").write_text("# NOW\n\nmine\n", encoding="utf-8")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "cycle.md").write_text("my prompt\n", encoding="utf-8")
    code, out, _ = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.OK
    assert "initialised" not in out
    created = [line.split()[1] for line in out.splitlines() if line.startswith("created")]
    assert created == [rel for rel in expected_files() if rel not in ("NOW.md", "prompts/cycle.md")]
    assert "left alone  NOW.md (exists)" in out.splitlines()
    assert "left alone  prompts/cycle.md (exists)" in out.splitlines()
    assert (tmp_path / "NOW.md").read_text(encoding="utf-8") == "# NOW\n\nmine\n"
    assert (tmp_path / "prompts" / "cycle.md").read_text(encoding="utf-8") == "my prompt\n"


def test_existing_precommit_config_keeps_every_line_and_is_idempotent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pygit2.init_repository(str(tmp_path))
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text(USER_CONFIG, encoding="utf-8")
    code, out, _ = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.OK
    assert "updated     .pre-commit-config.yaml (gitmem hooks added)" in out.splitlines()
    merged = config.read_text(encoding="utf-8")
    old, new = USER_CONFIG.splitlines(), merged.splitlines()
    # Exactly five lines inserted after the last repo entry, in the user's indentation; nothing else moved.
    added = new[18:23]
    assert new[:18] + new[23:] == old
    assert added[1].split() == ["rev:", gitmem.PINNED_COMMIT, "#", "frozen:", f"v{gitmem.__version__}"]
    assert added[:1] + added[2:] == [f"- repo: https://github.com/{gitmem.REPOSITORY}", "  hooks:",
                                     "  - id: gitmem-check", "  - id: gitmem-verify"]
    assert hook_ids(merged) == [
        ("https://github.com/pre-commit/pre-commit-hooks", ["trailing-whitespace", "end-of-file-fixer"]),
        ("https://github.com/psf/black", ["black"]),
        ("https://github.com/gitmem-agent/gitmem", ["gitmem-check", "gitmem-verify"]),
    ]
    subprocess.run([PRE_COMMIT, "validate-config", str(config)], check=True, capture_output=True)

    before = snapshot(tmp_path)
    code, out, _ = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.OK
    assert snapshot(tmp_path) == before
    assert "left alone  .pre-commit-config.yaml (exists)" in out.splitlines()
    assert not [line for line in out.splitlines() if line.startswith(("created", "updated"))]


@pytest.mark.parametrize(("original", "keep"), [
    pytest.param("repos:\n  - repo: https://example.org/a\n    rev: v1\n    hooks:\n      - id: a\n",
                 "repos:\n  - repo: https://example.org/a\n", id="indented-dashes"),
    pytest.param("# only a comment\n", "# only a comment\n", id="comments-only"),
    pytest.param("", "", id="empty"),
    pytest.param("default_stages: [pre-commit]  # why\n", "default_stages: [pre-commit]  # why\n", id="no-repos"),
    pytest.param("# flow\nrepos: []\n", "# flow\n", id="flow-empty"),
    pytest.param("repos:\r\n- repo: https://example.org/a\r\n  rev: v1\r\n  hooks:\r\n  - id: a\r\n",
                 "repos:\r\n- repo: https://example.org/a\r\n", id="crlf"),
])
def test_precommit_merge_handles_layouts(tmp_path: Path, original: str, keep: str) -> None:
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_bytes(original.encode("utf-8"))
    template = gitmem_init.template_dir() / gitmem_init.PRECOMMIT
    assert gitmem_init.merge_precommit(config, template) is True
    merged = config.read_bytes().decode("utf-8")
    assert merged.startswith(keep)
    assert ("\r\n" in merged) == ("\r\n" in original)
    assert hook_ids(merged)[-1] == ("https://github.com/gitmem-agent/gitmem", ["gitmem-check", "gitmem-verify"])
    subprocess.run([PRE_COMMIT, "validate-config", str(config)], check=True, capture_output=True)
    assert gitmem_init.merge_precommit(config, template) is False
    assert config.read_bytes().decode("utf-8") == merged


def test_precommit_merge_keeps_each_lines_own_end(tmp_path: Path) -> None:
    """A config with CRLF on some lines and LF on others came back with CRLF on every line, as JSONC settings did
    (scaffold.line_ends): the user's lines keep their ends, and ours take the end of the line above them."""
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_bytes(b"repos:\r\n- repo: https://example.org/a\n  rev: v1\r\n  hooks:\n  - id: a\n")
    template = gitmem_init.template_dir() / gitmem_init.PRECOMMIT
    assert gitmem_init.merge_precommit(config, template) is True
    lines = config.read_bytes().splitlines(keepends=True)
    assert lines[:5] == [b"repos:\r\n", b"- repo: https://example.org/a\n", b"  rev: v1\r\n", b"  hooks:\n",
                         b"  - id: a\n"], lines
    assert hook_ids(config.read_text(encoding="utf-8"))[-1][1] == ["gitmem-check", "gitmem-verify"]



def test_precommit_merge_adds_only_the_missing_hook(tmp_path: Path) -> None:
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text("repos:\n- repo: https://github.com/gitmem-agent/gitmem\n  rev: v0.0.9\n  hooks:\n"
                      "  - id: gitmem-check\n", encoding="utf-8")
    assert gitmem_init.merge_precommit(config, gitmem_init.template_dir() / gitmem_init.PRECOMMIT) is True
    assert hook_ids(config.read_text(encoding="utf-8")) == [
        ("https://github.com/gitmem-agent/gitmem", ["gitmem-check"]),
        ("https://github.com/gitmem-agent/gitmem", ["gitmem-verify"]),
    ]


def test_invalid_precommit_config_is_reported_and_left_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pygit2.init_repository(str(tmp_path))
    config = tmp_path / ".pre-commit-config.yaml"
    config.write_text("repos:\n- repo: x\n  hooks: [unclosed\n", encoding="utf-8")
    code, out, err = run(capsys, "init", str(tmp_path))
    assert code == ExitCode.USAGE
    assert err.startswith(f"gitmem: {config}:")
    assert "not valid YAML" in err
    assert config.read_text(encoding="utf-8") == "repos:\n- repo: x\n  hooks: [unclosed\n"
    # Everything else was still created.
    assert [line.split()[1] for line in out.splitlines() if line.startswith("created")] == [
        rel for rel in expected_files() if rel != gitmem_init.PRECOMMIT]


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "agent"
    code, out, _ = run(capsys, "init", str(target), "--json")
    assert code == ExitCode.OK
    report = json.loads(out)
    assert report["created"] == expected_files()
    assert report["left_alone"] == [] and report["updated"] == [] and report["problems"] == []
    assert report["initialised_git"] is True
    assert report["root"] == str(target.resolve())
    assert report["next"].endswith("pre-commit install --hook-type pre-commit --hook-type pre-push")
    code, out, _ = run(capsys, "init", str(target), "--json")
    again = json.loads(out)
    assert (again["created"], again["left_alone"], again["initialised_git"]) == ([], expected_files(), False)


def test_dotfiles_and_nested_template_dirs_are_copied(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    template = tmp_path / "template"
    files = {
        ".github/workflows/gitmem.yml": "name: gitmem\n",
        ".github/workflows/gitmem-check.yml": "name: gitmem check\n",
        ".editorconfig": "root = true\n",
        "a/b/c/deep.md": "deep\n",
        "NOW.md": "# NOW\n",
        "README.md": "about the template\n",
    }
    for rel, text in files.items():
        (template / rel).parent.mkdir(parents=True, exist_ok=True)
        (template / rel).write_text(text, encoding="utf-8")
    monkeypatch.setattr(gitmem_init, "template_dir", lambda: template)
    target = tmp_path / "agent"
    code, out, _ = run(capsys, "init", str(target), "--json")
    assert code == ExitCode.OK
    copied = sorted(rel for rel in files if rel != "README.md")
    assert json.loads(out)["created"] == copied
    registered = (b"\n# Memory files merge by memory rules in a local git merge or rebase (added by gitmem init)\n"
                  b"/LOG.md merge=gitmem\n/NOW.md merge=gitmem\n/DECISIONS.md merge=gitmem\n/LESSONS.md merge=gitmem\n")
    # The template's own .gitattributes is not copied (init.NOT_COPIED): init writes the mapped files' lines.
    assert snapshot(target) == {**{rel: files[rel].encode() for rel in copied}, ".gitattributes": registered[1:]}


def test_the_shipped_workflows_are_installed(tmp_path: Path) -> None:
    workflows = [rel for rel in gitmem_init.template_files() if rel.startswith(".github/workflows/")]
    report = gitmem_init.init(tmp_path / "agent")
    assert all(rel in report.created for rel in workflows)
    assert all((tmp_path / "agent" / rel).is_file() for rel in workflows)


def test_init_inside_an_existing_repo_subfolder_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pygit2.init_repository(str(tmp_path))
    sub = tmp_path / "docs"
    sub.mkdir()
    (sub / "guide.md").write_text("hello\n", encoding="utf-8")
    code, out, err = run(capsys, "init", str(sub))
    assert code == ExitCode.USAGE
    assert f"is inside the git repository at {tmp_path.resolve()}" in err
    assert out == ""
    assert sorted(p.name for p in sub.iterdir()) == ["guide.md"]


def test_init_from_a_subfolder_suggests_the_same_command_at_the_root_quoted_and_with_its_options(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A new user runs `gitmem init --agent claude` from a subfolder: the suggested command dropped `--agent claude`
    (pasted, it wired no agent) and left a path with a space unquoted (pasted, it split in two)."""
    import shlex
    import subprocess

    root = tmp_path / "my project"
    pygit2.init_repository(str(root))
    sub = root / "src"
    sub.mkdir()
    (sub / "app.py").write_text("print('hi')\n", encoding="utf-8")
    code, out, err = run(capsys, "init", "--agent", "claude", "--plain-hooks", str(sub))
    assert code == ExitCode.USAGE and out == ""
    suggested = err.split("run `", 1)[1].split("`", 1)[0]
    assert shlex.split(suggested) == ["gitmem", "init", "--plain-hooks", "--agent", "claude", str(root.resolve())]
    echoed = subprocess.run(["sh", "-c", f"printf '%s\\n' {suggested.removeprefix('gitmem init ')}"],
                            capture_output=True, text=True, check=True).stdout
    assert echoed.splitlines()[-1] == str(root.resolve()), "one argument, as the shell reads the pasted line"


def test_init_of_a_new_folder_inside_a_repo_starts_its_own_repo(tmp_path: Path) -> None:
    pygit2.init_repository(str(tmp_path))
    report = gitmem_init.init(tmp_path / "new-agent")
    assert report.initialised_git is True
    assert Path(pygit2.Repository(str(tmp_path / "new-agent")).workdir).resolve() == (tmp_path / "new-agent").resolve()


def test_init_of_a_bare_repository_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pygit2.init_repository(str(tmp_path / "origin.git"), bare=True)
    before = snapshot(tmp_path)
    code, out, err = run(capsys, "init", str(tmp_path / "origin.git"))
    assert code == ExitCode.USAGE
    assert "is a bare git repository; clone it and run `gitmem init` in the clone" in err
    assert snapshot(tmp_path) == before


def test_init_and_demo_say_why_a_directory_cannot_be_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A file where a parent directory should be: mkdir fails with an errno, which both commands turn into a
    # usage error that names the path (scaffold.make_directory), leaving everything as it was.
    (tmp_path / "a-file").write_text("not a directory\n", encoding="utf-8")
    before = snapshot(tmp_path)
    for command in ("init", "demo"):
        code, out, err = run(capsys, command, str(tmp_path / "a-file" / "agent"))
        assert code == ExitCode.USAGE, (command, err)
        assert f"cannot create {tmp_path / 'a-file' / 'agent'}: Not a directory; give a directory you can write to" \
            in err, command
        assert snapshot(tmp_path) == before
