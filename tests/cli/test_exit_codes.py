"""Every exit code any command can return has a meaning (`gitmem.errors.MEANINGS`) and is in that command's
--help. Each command's codes are read from its help (tests/support/exit_codes.py), and every in-process run
of the CLI in the suite is held to them (tests/support/helpers.run_cli): an undocumented exit is a defect
that fails the test meeting it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.errors import ALWAYS, MEANINGS, ExitCode
from gitmem.memory import log
from tests.support.cycle_support import origin_and_clone
from tests.support.exit_codes import declared, groups, leaf_commands
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import command_agent

COMMANDS = sorted(leaf_commands(), key=lambda leaf: leaf[0])


def test_every_exit_code_has_one_meaning() -> None:
    assert set(MEANINGS) == set(ExitCode)


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(path) for path, _ in COMMANDS])
def test_every_command_lists_its_exit_codes_in_its_help(path: tuple[str, ...], command, memrepo: GitRepo,
                                                        cli) -> None:
    codes = declared(command)
    assert codes, f"`gitmem {' '.join(path)} --help` has no `Exit codes:` paragraph"
    assert codes <= {int(code) for code in MEANINGS}
    # A bad option is 2 for every command but the session hooks, which a CLI's settings run: they end 0 always.
    assert {ExitCode.OK, *ALWAYS} <= codes and (ExitCode.USAGE in codes) == (path[0] != "hook")
    shown = cli([*path, "--help"], cwd=memrepo.path)
    assert shown.code == ExitCode.OK and "Exit codes: 0 " in " ".join(shown.out.split())


GROUPS = sorted(groups(), key=lambda group: group[0])


@pytest.mark.parametrize(("path", "group"), GROUPS, ids=[" ".join(path) for path, _ in GROUPS])
def test_every_group_lists_its_exit_codes_in_its_help_as_every_command_does(path: tuple[str, ...], group,
                                                                            memrepo: GitRepo, cli) -> None:
    """`gitmem log --help` (every group's page) had no `Exit codes:` line where every command's page has one; a
    group made without `CommandGroup` fails here."""
    assert declared(group) >= {ExitCode.OK, ExitCode.USAGE, *ALWAYS}, " ".join(path)
    shown = cli([*path, "--help"], cwd=memrepo.path)
    assert shown.code == ExitCode.OK and "Exit codes: 0 " in " ".join(shown.out.split())
    alone = cli([*path], cwd=memrepo.path)
    assert alone.code == ExitCode.USAGE      # no command given: as the help says
    # Its help, once, on stderr: not click's usage lines and then the whole help again as `gitmem: Usage: …`.
    assert alone.err.count("Usage:") == 1 and "gitmem: " not in alone.err and "Exit codes:" in alone.err


def test_an_unknown_command_or_option_exits_2_as_the_help_says(memrepo: GitRepo, cli) -> None:
    assert cli(["no-such-command"], cwd=memrepo.path).code == ExitCode.USAGE
    assert cli(["log", "add", "--no-such-option"], cwd=memrepo.path).code == ExitCode.USAGE


_WORK_THEN_LOG = '''
open(os.path.join(root, "work.txt"), "w").write("the agent's work\\n")
'''


def test_a_cycle_whose_own_entry_the_rules_refuse_exits_4_and_pushes_the_work(tmp_path: Path, memrepo: GitRepo,
                                                                            cli) -> None:
    """LOG's last cycle is 999999999999999999 (the most digits a cycle number has): the next number cannot be
    written, so the agent's entry and even the runner's no-build entry are refused. The cycle used to end with
    the writer's exit 1 (`refusing to write LOG.md`), undocumented, its work on a local branch only; now it
    ends 4 (GM721), and with --push the salvage branch reaches the remote."""
    command_agent(tmp_path, memrepo, _WORK_THEN_LOG)
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + "\n## 2026-12-01 08:00 UTC · cycle 999999999999999999"
                                                             " · built\n- Task: t\n- Result: r\n"}, "the last number")
    origin = origin_and_clone(tmp_path, memrepo)
    start = memrepo.head()
    result = cli(["cycle", "--push", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.out + result.err
    report = json.loads(result.lines[-1])
    assert [v["code"] for v in report["violations"]] == ["GM721"]
    assert "refused the runner's no-build entry" in report["error"]
    assert memrepo.head() == start and git(memrepo.path, "status", "--porcelain") == ""
    branch = "gitmem/salvage/cycle-1000000000000000000"
    assert git(origin, "show", f"{branch}:work.txt") == "the agent's work\n"
    assert [e.cycle for e in log.parse(memrepo.read("LOG.md")).entries][-1] == 999999999999999999
