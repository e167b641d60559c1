"""`gitmem check` and `gitmem verify` end to end: which index they read, that they never write, ranges,
output formats, exit codes, and bad input that must give a GM error or a config error, never a traceback."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pygit2
import pytest

from gitmem.checks.render import RENDERERS
from gitmem.checks.violation import Violation
from gitmem.codes import CODES as RULES
from gitmem.codes import code_re, slug_re
from gitmem.errors import ExitCode
from tests.support.builders import (
    LOG_BASE,
    decisions_md,
    log_entry,
    now_block,
    now_md,
    pending,
    resolved,
)
from tests.support.helpers import AGENT, GitRepo, make_repo

FIXTURES = Path(__file__).parents[1] / "fixtures" / "render"
GOOD_ENTRY = log_entry(10, 2)
BAD_ENTRY = log_entry(10, 2, task=False)          # GM305


def bad_log_line(repo: GitRepo) -> int:
    """The line of the appended (bad) entry's heading, in the template LOG plus BAD_ENTRY."""
    return repo.read("LOG.md").count("\n") + 2


def codes(result) -> list[str]:
    return [line.split(": ", 2)[1].split()[0] for line in result.lines]


# ---- which index is read ---------------------------------------------------------------------------------

def _index_from_head(repo: GitRepo, path: Path) -> Path:
    index = pygit2.Index(str(path))
    index.read_tree(repo.repo.head.peel(pygit2.Commit).tree)
    index.write()
    return path


def test_check_follows_git_index_file_with_a_bad_temp_index(memrepo: GitRepo, cli, monkeypatch, tmp_path) -> None:
    line = bad_log_line(memrepo)
    memrepo.append("LOG.md", BAD_ENTRY)
    temp = _index_from_head(memrepo, tmp_path / "commit-a-index")
    memrepo.stage("LOG.md", index_path=temp)            # .git/index stays clean
    assert cli(["check"], cwd=memrepo.path).code == 0
    monkeypatch.setenv("GIT_INDEX_FILE", str(temp))
    before = (temp.read_bytes(), temp.stat().st_mtime_ns)
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert result.lines[0].startswith(f"LOG.md:{line}: GM305 ")
    assert (temp.read_bytes(), temp.stat().st_mtime_ns) == before


def test_check_follows_git_index_file_with_a_clean_temp_index(memrepo: GitRepo, cli, monkeypatch,
                                                              tmp_path) -> None:
    memrepo.append("LOG.md", BAD_ENTRY)
    memrepo.stage("LOG.md")                              # .git/index is bad
    temp = _index_from_head(memrepo, tmp_path / "clean-index")
    assert cli(["check"], cwd=memrepo.path).code == 1
    monkeypatch.setenv("GIT_INDEX_FILE", str(temp))
    result = cli(["check"], cwd=memrepo.path)
    assert (result.code, result.out) == (0, "")


def test_check_follows_a_relative_git_index_file_from_a_hook(memrepo: GitRepo, cli, monkeypatch) -> None:
    """Plain `git commit` hands hooks GIT_INDEX_FILE=.git/index (relative to the work tree)."""
    memrepo.append("LOG.md", BAD_ENTRY)
    memrepo.stage("LOG.md")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/index")
    assert codes(cli(["check"], cwd=memrepo.path)) == ["GM305"]


def test_unborn_head_checks_every_file_as_new(tmp_path, git_env, cli) -> None:
    repo = make_repo(tmp_path / "fresh", commit=False)
    result = cli(["check"], cwd=repo.path)
    assert (result.code, result.out) == (0, ""), result.err
    repo.write("NOW.md", now_md(now_block(9, 1), now_block(10, 2)))
    repo.write("LOG.md", LOG_BASE + log_entry(8, 1))
    repo.stage("NOW.md", "LOG.md")
    result = cli(["check"], cwd=repo.path)
    assert result.code == 1
    log_line = LOG_BASE.count("\n") + 2
    now_line = now_md(now_block(9, 1), now_block(10, 2)).split("\n").index(now_block(10, 2).split("\n")[0]) + 1
    # Rules 4 order both files by position: the times going back are warnings (GM310); the cycle is an error.
    top_line = now_md(now_block(9, 1), now_block(10, 2)).split("\n").index(now_block(9, 1).split("\n")[0]) + 1
    assert now_line > top_line
    assert [line.split(" ", 2)[:2] for line in result.lines] == [
        [f"LOG.md:{log_line}:", "GM303"], [f"LOG.md:{log_line}:", "GM310"], [f"NOW.md:{top_line}:", "GM310"]]


def test_worktree_mode_reads_unstaged_files(memrepo: GitRepo, cli) -> None:
    line = bad_log_line(memrepo)
    memrepo.append("LOG.md", BAD_ENTRY)
    assert cli(["check"], cwd=memrepo.path).code == 0              # nothing staged
    result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == 1
    assert result.lines[0].startswith(f"LOG.md:{line}: GM305 ")
    memrepo.write("LOG.md", memrepo.read("LOG.md").replace(BAD_ENTRY, GOOD_ENTRY))
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def test_worktree_mode_sees_a_deleted_file(memrepo: GitRepo, cli) -> None:
    memrepo.delete("NOW.md")
    assert codes(cli(["check", "--worktree"], cwd=memrepo.path)) == ["GM904"]


def test_a_memory_file_not_yet_staged_is_named_so_with_the_git_add_that_stages_it(tmp_path, git_env, cli) -> None:
    """Right after `gitmem init` in a new repository (no commit yet), `gitmem check` said every memory file was
    missing and to run `gitmem init`, which then left them all alone: they were there, only not staged. The same
    after `git add LOG.md NOW.md` or `git rm --cached`."""
    repo = make_repo(tmp_path / "fresh", template=False, commit=False)
    assert cli(["init"], cwd=repo.path).code == ExitCode.OK
    result = cli(["check"], cwd=repo.path)
    assert result.code == ExitCode.VIOLATIONS
    assert "gitmem init" not in result.out, result.out
    assert "LOG.md:1: GM904 memory file LOG.md is not staged" in result.out, result.out
    assert "git add LOG.md" in result.out, result.out
    repo.stage("LOG.md")
    assert "LOG.md:1" not in cli(["check"], cwd=repo.path).out
    (repo.path / "NOW.md").unlink()                     # gone from the work tree too: it is missing
    assert "NOW.md:1: GM904 memory file NOW.md is missing" in cli(["check"], cwd=repo.path).out


@pytest.mark.parametrize("argv", [["check"], ["check", "--worktree"]], ids=["staged", "worktree"])
def test_a_repository_with_no_memory_is_told_to_run_init_once_exit_2_as_status_says(tmp_path, git_env, cli,
                                                                                   argv: list[str]) -> None:
    """No memory file anywhere (gitmem never set up here): five GM904 lines and exit 1 (violations), where every
    other command says "run `gitmem init`" once and exits 2."""
    repo = make_repo(tmp_path / "plain", template=False)
    repo.commit_files({"README.md": "a project\n"}, "work")
    result = cli(argv, cwd=repo.path)
    told = cli(["status"], cwd=repo.path)
    assert (result.code, told.code) == (ExitCode.USAGE, ExitCode.USAGE), result.out + result.err
    assert result.out == "" and "GM904" not in result.err
    assert result.err == told.err and result.err.count("\n") == 1
    assert "run `gitmem init` to create it" in result.err


# ---- check never writes ----------------------------------------------------------------------------------

def _state(repo: GitRepo) -> dict[str, tuple[bytes, int]]:
    """Bytes and mtime of the index and of every file in the work tree and .git (objects excluded)."""
    found = {}
    for path in sorted(repo.path.rglob("*")):
        if path.is_file() and "objects" not in path.relative_to(repo.path).parts:
            found[str(path.relative_to(repo.path))] = (path.read_bytes(), path.stat().st_mtime_ns)
    return found


@pytest.mark.parametrize("entry", [GOOD_ENTRY, BAD_ENTRY], ids=["good", "bad"])
@pytest.mark.parametrize("mode", [[], ["--worktree"]], ids=["staged", "worktree"])
def test_check_never_writes_the_index_or_the_work_tree(memrepo: GitRepo, cli, entry: str, mode) -> None:
    memrepo.append("LOG.md", entry)
    memrepo.stage("LOG.md")
    memrepo.append("NOW.md", "\n")            # an unstaged change too: the index is not refreshed from it
    index = memrepo.path / ".git" / "index"
    before_index = (index.read_bytes(), index.stat().st_mtime_ns)
    before = _state(memrepo)
    result = cli(["check", *mode], cwd=memrepo.path)
    assert result.code == (0 if entry == GOOD_ENTRY else 1)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before_index
    assert _state(memrepo) == before


# ---- verify ----------------------------------------------------------------------------------------------

@pytest.fixture
def history(memrepo: GitRepo) -> dict[str, str]:
    """main: start -> good (cycle 2) -> bad (cycle 3 without Task) -> good (cycle 4)."""
    shas = {"start": memrepo.head()}
    base = memrepo.read("LOG.md")
    memrepo.commit_files({"LOG.md": base + log_entry(10, 2)}, "cycle 2")
    shas["good"] = memrepo.head()
    memrepo.commit_files({"LOG.md": base + log_entry(10, 2) + log_entry(11, 3, task=False)}, "cycle 3")
    shas["bad"] = memrepo.head()
    memrepo.commit_files({"LOG.md": base + log_entry(10, 2) + log_entry(11, 3, task=False) + log_entry(12, 4)},
                         "cycle 4")
    shas["end"] = memrepo.head()
    shas["bad_line"] = str((base + log_entry(10, 2)).count("\n") + 2)
    return shas


def test_verify_clean_range(memrepo: GitRepo, history, cli) -> None:
    result = cli(["verify", "--range", f"{history['start']}..{history['good']}"], cwd=memrepo.path)
    assert (result.code, result.out) == (0, "")
    assert "1 commit(s) verified" in result.err


def test_verify_reports_the_bad_middle_commit_only(memrepo: GitRepo, history, cli) -> None:
    result = cli(["verify", "--range", f"{history['start']}..{history['end']}"], cwd=memrepo.path)
    assert result.code == 1
    assert len(result.lines) == 1
    assert result.lines[0].startswith(f"LOG.md:{history['bad_line']}: GM305 cycle 3 has no Task")
    assert f"(commit {history['bad'][:10]})" in result.lines[0]
    later = cli(["verify", "--range", f"{history['bad']}..{history['end']}"], cwd=memrepo.path)
    assert (later.code, later.out) == (0, "")      # the commit after it is fine against its own parent


def test_verify_checks_gm207_with_each_commits_author(memrepo: GitRepo, cli) -> None:
    start = memrepo.head()
    memrepo.commit_files({"DECISIONS.md": decisions_md(pending(1))}, "ask")
    memrepo.commit_files({"DECISIONS.md": decisions_md(resolved=resolved(1))}, "answer", author=AGENT)
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert result.code == 1
    assert codes(result) == ["GM207"]


def test_verify_skips_history_from_before_gitmem_was_adopted(tmp_path, git_env, cli) -> None:
    """`gitmem init` in an old project: a first push of the branch verifies from the root without GM904."""
    from gitmem.scaffold.init import template_dir, template_files

    repo = make_repo(tmp_path / "old-project", template=False)
    repo.commit_files({"README.md": "an old project\n"}, "before gitmem")
    repo.commit_files({"src.py": "print(1)\n"}, "still before gitmem")
    repo.commit_files({rel: (template_dir() / rel).read_bytes() for rel in template_files()}, "gitmem init")
    repo.commit_files({"LOG.md": repo.read("LOG.md") + GOOD_ENTRY}, "cycle 2")
    result = cli(["verify", "--range", f"{'0' * 40}..HEAD"], cwd=repo.path)
    assert (result.code, result.out) == (0, ""), result.out
    assert "4 commit(s) verified" in result.err
    memory = ("DECISIONS.md", "LESSONS.md", "LOG.md", "NOW.md", "RULES.md")
    repo.commit_files(dict.fromkeys(memory), "drop the memory")
    dropped = cli(["verify", "--range", "HEAD~1..HEAD"], cwd=repo.path)
    assert dropped.code == 1
    assert [line.split(" ", 2)[:2] for line in dropped.lines] == sorted(
        [[f"{name}:1:", "GM904"] for name in memory] + [["LOG.md:1:", "GM301"]])


def test_verify_rewritten_history_exits_5_with_gm906(memrepo: GitRepo, history, cli) -> None:
    repo = memrepo.repo
    start = repo.get(history["start"])
    other = repo.create_commit("refs/heads/rewritten", start.author, start.committer, "rewritten",
                               start.tree.id, [])
    result = cli(["verify", "--range", f"{history['end']}..{other}"], cwd=memrepo.path)
    assert result.code == ExitCode.REWRITTEN == 5
    assert result.lines[0].startswith(f"(range):1: GM906 {other} does not descend from {history['end']}")


def test_verify_after_a_force_push_whose_old_tip_the_clone_never_fetched_exits_5_with_gm906(
        memrepo: GitRepo, history, cli, tmp_path: Path) -> None:
    """The template's check workflow verifies a push as `before..after`. After a force-push GitHub's `before` is
    the old tip, which no branch holds any more, so the checkout (full history) never fetched it: the range's
    start is a commit id this repository does not have. In a complete clone nothing that descends from it can
    be missing it, so it is history rewritten (GM906, exit 5) as when the old tip is at hand, not an "unknown
    revision" (exit 2)."""
    from tests.support.gitcli import git, run_git

    git(memrepo.path, "checkout", "-q", "-b", "before-the-force-push", history["start"])
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + log_entry(20, 2)}, "the tip the force-push drops")
    dropped = memrepo.head()
    git(memrepo.path, "checkout", "-q", "main")
    clone = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", "--no-local", "--single-branch", "--branch", "main", str(memrepo.path), str(clone))
    assert run_git(clone, "cat-file", "-t", dropped, check=False).returncode != 0
    result = cli(["verify", "--range", f"{dropped}..{history['end']}", "--branch", "main"], cwd=clone)
    assert result.code == ExitCode.REWRITTEN == 5, result.err
    assert result.lines[0].startswith(f"(range):1: GM906 {history['end']} does not descend from {dropped}")
    # A revision that names nothing is still an unknown revision, and so is an id in a shallow clone, whose cut
    # hides what it holds.
    assert cli(["verify", "--range", f"nonsense..{history['end']}"], cwd=clone).code == 2
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", "--no-local", str(memrepo.path), str(shallow))
    assert cli(["verify", "--range", f"{dropped}..HEAD"], cwd=shallow).code != ExitCode.REWRITTEN


def test_verify_pre_push_from_pre_commit_env(memrepo: GitRepo, history, cli, monkeypatch) -> None:
    monkeypatch.setenv("PRE_COMMIT_FROM_REF", history["start"])
    monkeypatch.setenv("PRE_COMMIT_TO_REF", history["end"])
    result = cli(["verify", "--pre-push"], cwd=memrepo.path)
    assert (result.code, codes(result)) == (1, ["GM305"])
    monkeypatch.setenv("PRE_COMMIT_TO_REF", history["good"])
    assert cli(["verify", "--pre-push"], cwd=memrepo.path).code == 0


def test_verify_pre_push_from_git_stdin(memrepo: GitRepo, history, cli) -> None:
    zero = "0" * 40
    push = f"refs/heads/main {history['end']} refs/heads/main {history['start']}\n"
    result = cli(["verify", "--pre-push"], cwd=memrepo.path, stdin=push)
    assert (result.code, codes(result)) == (1, ["GM305"])
    clean = f"refs/heads/main {history['good']} refs/heads/main {history['start']}\n"
    assert cli(["verify", "--pre-push"], cwd=memrepo.path, stdin=clean).code == 0
    deleting = f"(delete) {zero} refs/heads/old {history['end']}\n"
    assert cli(["verify", "--pre-push"], cwd=memrepo.path, stdin=deleting).code == 0
    new_branch = f"refs/heads/main {history['end']} refs/heads/topic {zero}\n"
    assert codes(cli(["verify", "--pre-push"], cwd=memrepo.path, stdin=new_branch)) == ["GM305"]


def test_verify_pre_push_refuses_a_force_push(memrepo: GitRepo, history, cli) -> None:
    """The local tip no longer contains what the remote has: history was rewritten."""
    push = f"refs/heads/main {history['good']} refs/heads/main {history['end']}\n"
    result = cli(["verify", "--pre-push"], cwd=memrepo.path, stdin=push)
    assert result.code == ExitCode.REWRITTEN
    assert codes(result) == ["GM906"]


# ---- output formats and the registry ---------------------------------------------------------------------

SAMPLE = sorted([
    Violation("NOW.md", 7, "GM101", "NOW block has 12 non-blank lines; the limit is 10",
              "keep Did / Human / Next short; details belong in LOG"),
    Violation("LOG.md", 120, "GM301", "LOG was rewritten at line 120; only appending is allowed"),
    Violation("DECISIONS.md", 3, "GM905", "CRLF line endings; they are accepted, canonical files use LF"),
    Violation("docs/a,b:c.md", 1, "GM904", "memory file docs/a,b:c.md is missing: 100% gone\nsecond line",
              "run `gitmem init`"),
    Violation("LESSONS.md", 9, "GM404", "L-0003: bad Status `fertig — süß`"),
])


@pytest.mark.parametrize(("fmt", "name"), [("text", "sample.txt"), ("github", "sample.github.txt"),
                                           ("json", "sample.json")])
def test_renderers_match_saved_output(fmt: str, name: str) -> None:
    assert RENDERERS[fmt](SAMPLE) == (FIXTURES / name).read_text(encoding="utf-8")


def test_json_output_round_trips_the_violations() -> None:
    data = json.loads(RENDERERS["json"](SAMPLE))
    assert [(d["path"], d["line"], d["code"], d["message"], d["hint"]) for d in data] == [
        (v.path, v.line, v.code, v.message, v.hint) for v in SAMPLE]


def test_renderers_of_nothing_print_nothing_but_valid_json() -> None:
    assert RENDERERS["text"]([]) == RENDERERS["github"]([]) == ""
    assert json.loads(RENDERERS["json"]([])) == []


def test_check_cli_formats(memrepo: GitRepo, cli) -> None:
    line = bad_log_line(memrepo)
    memrepo.append("LOG.md", BAD_ENTRY)
    memrepo.stage("LOG.md")
    github = cli(["check", "--format", "github"], cwd=memrepo.path)
    assert github.code == 1
    assert github.lines[0].startswith(f"::error file=LOG.md,line={line},title=GM305 log-cycle-incomplete::")
    data = json.loads(cli(["check", "--format", "json"], cwd=memrepo.path).out)
    assert [(d["path"], d["line"], d["code"], d["severity"]) for d in data] == [("LOG.md", line, "GM305", "error")]
    # --json, as every other command spells it, is --format json; with another --format it is a usage error.
    flag = cli(["check", "--json"], cwd=memrepo.path)
    assert (flag.code, json.loads(flag.out)) == (1, data)
    both = cli(["check", "--json", "--format", "github"], cwd=memrepo.path)
    assert both.code == ExitCode.USAGE          # --json was asked for, so the refusal is JSON on stdout too
    assert json.loads(both.out)["error"] == "--json and --format github ask for different output; give one"
    assert both.err == "gitmem: --json and --format github ask for different output; give one\n"
    assert cli(["check", "--json", "--format", "json"], cwd=memrepo.path).out == flag.out


def test_verify_takes_json_as_every_command_does(memrepo: GitRepo, history, cli) -> None:
    span = f"{history['start']}..{history['end']}"
    flag = cli(["verify", "--range", span, "--json"], cwd=memrepo.path)
    assert flag.code == 1
    assert json.loads(flag.out) == json.loads(cli(["verify", "--range", span, "--format", "json"],
                                                  cwd=memrepo.path).out)
    assert [d["code"] for d in json.loads(flag.out)] == ["GM305"]


def test_registry_codes_and_slugs_are_unique_and_well_formed() -> None:
    codes_ = [rule.code for rule in RULES]
    slugs = [rule.slug for rule in RULES]
    assert len(set(codes_)) == len(codes_)
    assert len(set(slugs)) == len(slugs)
    assert all(code_re().match(code) for code in codes_)
    assert all(slug_re().match(slug) for slug in slugs)
    assert all(rule.severity in ("error", "warning") and rule.summary for rule in RULES)
    assert codes_ == sorted(codes_)


def test_every_code_the_package_emits_is_registered() -> None:
    import re

    import gitmem

    used: set[str] = set()
    for source in Path(gitmem.__file__).parent.rglob("*.py"):
        used |= set(re.findall(r"\"(GM\d{3})\"", source.read_text(encoding="utf-8")))
    assert used, "no codes found: the scan is broken"
    assert used <= {rule.code for rule in RULES}


# ---- exit codes ------------------------------------------------------------------------------------------

def test_exit_codes(memrepo: GitRepo, cli, tmp_path) -> None:
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    result = cli(["check"], cwd=not_a_repo)
    assert result.code == ExitCode.USAGE
    assert "not inside a git repository" in result.err and "Traceback" not in result.err
    assert cli(["verify"], cwd=memrepo.path).code == ExitCode.USAGE
    assert cli(["verify", "--range", "nonsense"], cwd=memrepo.path).code == ExitCode.USAGE
    assert cli(["verify", "--range", "HEAD..nope"], cwd=memrepo.path).code == ExitCode.USAGE
    assert cli(["check", "--format", "xml"], cwd=memrepo.path).code == ExitCode.USAGE
    memrepo.append("LOG.md", BAD_ENTRY)
    memrepo.stage("LOG.md")
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.VIOLATIONS


@pytest.mark.parametrize(("yaml", "where"), [
    ("limits: [1, 2\n", "gitmem.yaml:"),
    ("limits:\n  now_block_lines: many\n", "gitmem.yaml:2: GM927 limits.now_block_lines"),
    ("timezone: Mars/Olympus\n", "timezone"),
    (b"agent:\n  name: \xff\n", "gitmem.yaml:1: GM930 not valid UTF-8"),
])
def test_malformed_config_is_a_usage_error_with_the_path(memrepo: GitRepo, cli, yaml, where) -> None:
    memrepo.write("gitmem.yaml", yaml)
    for argv in (["check"], ["check", "--worktree"], ["verify", "--range", "HEAD..HEAD"]):
        result = cli(argv, cwd=memrepo.path)
        assert result.code == ExitCode.USAGE, result.out + result.err
        assert "gitmem.yaml" in result.err and where in result.err and "Traceback" not in result.err


def test_malformed_config_in_a_verified_commit_names_the_commit(memrepo: GitRepo, cli) -> None:
    start = memrepo.head()
    bad = memrepo.commit_files({"gitmem.yaml": "limits: [1, 2\n"}, "break config")
    memrepo.write("gitmem.yaml", "{}\n")
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    assert result.err.startswith("gitmem: gitmem.yaml:2: GM930 invalid YAML: ") and result.err.endswith(
        f" (commit {str(bad)[:10]})\n"), result.err


def test_a_config_error_in_a_verified_commit_keeps_its_path_line_and_code(memrepo: GitRepo, cli) -> None:
    """It read `commit abc: gitmem.yaml:2: GM927 …` as its message, and its --json had `code: null`: it is the one
    line `path:line: GMnnn message`, the commit named after the words as every violation of verify names it, and
    its code, path and line are data in --json."""
    start = memrepo.head()
    bad = memrepo.commit_files({"gitmem.yaml": "limits:\n  now_block_lines: many\n"}, "break config")
    memrepo.commit_files({"gitmem.yaml": "{}\n"}, "repair config")
    argv = ["verify", "--range", f"{start}..HEAD"]
    result = cli(argv, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    assert result.err == (f"gitmem: gitmem.yaml:2: GM927 limits.now_block_lines: expected a whole number, got "
                          f"'many' (text) (commit {str(bad)[:10]})\n")
    answer = json.loads(cli([*argv, "--json"], cwd=memrepo.path).out)
    assert answer["code"] == "GM927" and answer["error"] == result.err.removeprefix("gitmem: ").strip()
    assert [(v["path"], v["line"], v["code"], v["message"]) for v in answer["violations"]] == [
        ("gitmem.yaml", 2, "GM927", f"limits.now_block_lines: expected a whole number, got 'many' (text) "
                                    f"(commit {str(bad)[:10]})")]


def test_missing_config_means_defaults(memrepo: GitRepo, cli) -> None:
    memrepo.delete("gitmem.yaml")
    memrepo.stage("gitmem.yaml")
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.append("LOG.md", BAD_ENTRY)
    memrepo.stage("LOG.md")
    assert codes(cli(["check"], cwd=memrepo.path)) == ["GM305"]


# ---- bad input never crashes -----------------------------------------------------------------------------

MEMORY = ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md", "ROADMAP.md")
BINARY = bytes(range(256)) * 8
BIG = 1024 * 1024


@pytest.mark.parametrize("name", MEMORY)
@pytest.mark.parametrize("kind", ["binary", "nul-bytes", "empty", "huge-line", "huge-heading", "latin-1"])
def test_bad_input_gives_gm_errors_not_tracebacks(memrepo: GitRepo, cli, name: str, kind: str) -> None:
    old = (memrepo.path / name).read_bytes()
    data = {
        "binary": BINARY,
        "nul-bytes": old + b"\x00" * 1000 + b"\n",
        "empty": b"",
        "huge-line": old + b"\n- Evidence: " + b"word by word (x) " * (BIG // 17) + b"\n",
        "huge-heading": old + b"\n## " + b"2026-11-30 09:00 UTC \xc2\xb7 x by " * (BIG // 30) + b"\n",
        "latin-1": old + "\n## caf\u00e9 \u00b7 d\u00e9j\u00e0\n".encode("latin-1"),
    }[kind]
    memrepo.write(name, data)
    memrepo.stage(name)
    for argv in (["check"], ["check", "--worktree"], ["check", "--format", "json"]):
        result = cli(argv, cwd=memrepo.path)
        assert "Traceback" not in result.err and "unexpected error" not in result.err, result.err
        assert result.code in (ExitCode.OK, ExitCode.VIOLATIONS)
        assert len(result.out) < 20_000, "a message quoted a huge line whole"
    result = cli(["check"], cwd=memrepo.path)
    for line in result.lines:
        assert line.startswith(f"{name}:") and code_re().match(line.split(": ", 2)[1].split()[0]), line
    if kind in ("binary", "latin-1"):
        assert "GM902" in codes(result)
    if name == "LOG.md" and kind in ("binary", "empty", "latin-1", "huge-heading"):
        assert result.code == ExitCode.VIOLATIONS        # GM301 / GM902 / GM306


@pytest.mark.parametrize("name", MEMORY[:5])
def test_an_empty_new_file_on_an_unborn_head_is_reported(tmp_path, git_env, cli, name: str) -> None:
    repo = make_repo(tmp_path / "fresh", commit=False)
    repo.write(name, "")
    repo.stage(name)
    result = cli(["check"], cwd=repo.path)
    assert result.code == ExitCode.VIOLATIONS
    assert result.lines and all(line.startswith(f"{name}:1: GM") for line in result.lines), result.out


def test_binary_log_names_the_line_and_byte_of_the_file(memrepo: GitRepo, cli) -> None:
    head = memrepo.read("LOG.md").encode()
    memrepo.write("LOG.md", head + b"\n## \xff\n")
    memrepo.stage("LOG.md")
    result = cli(["check"], cwd=memrepo.path)
    line = head.count(b"\n") + 2
    assert result.lines == [f"LOG.md:{line}: GM902 not valid UTF-8 (byte {len(head) + 4}: invalid start byte) "
                            "[not-utf8] (hint: save the file as UTF-8; LOG, which is append-only, only by "
                            "replacing each byte that is not UTF-8 with U+FFFD)"]


def test_check_does_not_import_heavy_modules(memrepo: GitRepo) -> None:
    """The pre-commit path stays lean: no anthropic, mistune, httpx, numpy or the embedding model's packages in a
    `gitmem check` process."""
    import subprocess
    import sys

    probe = ("import sys; from gitmem.cli import main; code = main(['check']); "
             "heavy = sorted(m for m in ('anthropic', 'mistune', 'httpx', 'httpx2', 'numpy', 'tokenizers', "
             "'wordllama') if m in sys.modules); "
             "print(code, heavy)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=memrepo.path, capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr


# ---- fuzz: any bytes in any memory file give violations, never an exception --------------------------------

def _fuzz_text():
    from hypothesis import strategies as st

    pieces = st.sampled_from([
        "# NOW\n", "# LOG\n", "# DECISIONS\n", "# LESSONS\n", "## Pending\n", "## Resolved\n", "## Proven rules\n",
        "## Retired\n", "## 2026-11-30 09:00 UTC · cycle 1\n", "## 2026-11-30 09:00 UTC · cycle 2 · built\n",
        "## 2026-11-30 08:00 UTC · close\n", "### D-0001 · t\n", "## L-0001 · t\n", "- R-01 · r (human)\n",
        "- R-02 · r (from L-0001; cycles 4, 5)\n", "- Asked: 2026-11-30 09:00 UTC (cycle 1)\n", "- Answer: y\n",
        "- Answered: 2026-11-30 09:00 UTC by A <a@b>\n", "- Happened: 2026-11-30 (cycle 3) — x\n",
        "- Confirmed: 2026-11-30 (cycle 3) — x\n", "- Status: promoted R-01\n", "- Task: t\n", "- Result: r\n",
        "  continued\n", "\n", "```\n", "<<<<<<< HEAD\n", "=======\n", "\r\n", "\ufeff", "·", " - ", " | ",
    ])
    return st.lists(st.one_of(pieces, st.text(max_size=20)), max_size=25).map("".join)


def _fuzz_file():
    from hypothesis import strategies as st

    return st.one_of(st.none(), st.binary(max_size=200), _fuzz_text().map(lambda t: t.encode("utf-8")))


def test_checks_never_raise_on_arbitrary_memory() -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from gitmem.checks import CheckInput, run_checks
    from gitmem.config import Config
    from gitmem.gitio.snapshots import Snapshot

    names = ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md")
    registered = {rule.code for rule in RULES}

    # GITMEM_FUZZ_EXAMPLES=5000 for a longer hunt; the default keeps the suite quick.
    @settings(max_examples=int(os.environ.get("GITMEM_FUZZ_EXAMPLES", "300")), deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(old=st.fixed_dictionaries({n: _fuzz_file() for n in names}),
           new=st.fixed_dictionaries({n: _fuzz_file() for n in names}), append=st.booleans(),
           author=st.sampled_from([None, "agent@gitmem.invalid", "ada@example.com"]))
    def run(old, new, append, author) -> None:
        if append:   # the common case: new memory is the old plus something
            new = {n: (old[n] or b"") + (new[n] or b"") for n in names}
        old_snap = Snapshot.from_dict("old", {k: v for k, v in old.items() if v is not None})
        new_snap = Snapshot.from_dict("new", {k: v for k, v in new.items() if v is not None})
        found = run_checks(CheckInput(Config(), old_snap, new_snap, author))
        for v in found:
            assert v.code in registered and v.line >= 1 and v.path in names
            data = new[v.path] or b""
            assert v.line <= data.count(b"\n") + 1 or v.code == "GM301", (v, data)

    run()


def test_check_judges_the_workspaces_the_staged_config_names_not_the_work_trees(memrepo: GitRepo, cli) -> None:
    """A workspace added to gitmem.yaml and `gitmem init` run, nothing staged yet: `check` failed whole with
    "gitmem.yaml: unknown workspace 'w2' (none are configured)", exit 2, naming no file. The commit being made
    carries the staged config, so its workspaces are the ones judged; staged, w2's files are judged too."""
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "workspaces:\n  w2:\n    memory_dir: agents/w2\n")
    assert cli(["init"], cwd=memrepo.path).code == ExitCode.OK
    before = cli(["check"], cwd=memrepo.path)
    assert before.code == ExitCode.OK, before.err
    assert "unknown workspace" not in before.err
    memrepo.stage("gitmem.yaml")
    staged = cli(["check"], cwd=memrepo.path)
    assert staged.code == ExitCode.VIOLATIONS
    assert ("agents/w2/LOG.md:1: GM904 memory file agents/w2/LOG.md is not staged [memory-file-missing]"
            in staged.out)


def test_commits_from_before_adoption_are_said_once_not_judged_as_missing_memory(tmp_path, git_env, cli) -> None:
    """A project's own ROADMAP.md from before gitmem was adopted gave each such commit a GM904 for every other
    memory file (exit 1): such commits are counted once, and the memory is judged from the adoption on."""
    from gitmem.scaffold.init import template_dir, template_files
    from tests.support.helpers import filled_rules

    repo = make_repo(tmp_path / "project", template=False, commit=False)
    repo.commit_files({"ROADMAP.md": "# Roadmap\n\n- ship it\n", "app.py": "print(1)\n"}, "the project")
    repo.commit_files({"app.py": "print(2)\n"}, "more project")
    adopted = {rel: (template_dir() / rel).read_text(encoding="utf-8") for rel in template_files()
               if rel not in (".gitattributes", "ROADMAP.md")}
    adopted["RULES.md"] = filled_rules(adopted["RULES.md"])
    repo.commit_files(adopted, "adopt gitmem")
    result = cli(["verify", "--range", f"{'0' * 40}..HEAD"], cwd=repo.path)
    assert result.code == ExitCode.OK, result.out + result.err
    assert "GM904" not in result.out + result.err
    assert result.err.count("2 commit(s) from before gitmem was adopted") == 1, result.err
    # A memory file removed after the adoption is still missing, in the commit that removed it.
    dropped = repo.commit_files({"DECISIONS.md": None}, "drop DECISIONS")
    answer = json.loads(cli(["verify", "--range", f"{'0' * 40}..HEAD", "--json"], cwd=repo.path).out)
    assert [(v["path"], v["code"], v["message"]) for v in answer] == [
        ("DECISIONS.md", "GM904", f"memory file DECISIONS.md is missing (commit {str(dropped)[:10]})")]

