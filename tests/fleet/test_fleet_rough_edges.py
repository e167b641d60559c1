"""A human's first minutes with a fleet file, through the real CLI: an empty file, a fleet file kept as a link
(a dotfiles repository's), and a fleet file named with --fleet whose pages are off. Each said something that sent
the human looking: "expected a mapping" for a file with nothing in it, "pass the file itself" without naming it,
and "off in fleet.yaml" about another file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import make_repo

EMPTY = "GM927 the fleet file is empty: write `agents:`, a list of {name, repo} (see docs/fleet.md)"


@pytest.mark.parametrize("text", ["", "\n\n", "# my agents, one day\n", "\ufeff"])
def test_an_empty_fleet_file_says_it_is_empty_and_what_to_write(cli, tmp_path: Path, text: str) -> None:
    (tmp_path / "fleet.yaml").write_text(text, encoding="utf-8")
    done = cli(["fleet", "status"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE and done.out == ""
    assert done.err == f"gitmem: fleet.yaml:1: {EMPTY}\n"
    answer = json.loads(cli(["fleet", "pending", "--json"], cwd=tmp_path).out)
    assert answer["code"] == "GM927" and answer["error"] == f"fleet.yaml:1: {EMPTY}"


def test_a_fleet_file_kept_as_a_link_names_the_file_to_pass_instead(cli, tmp_path: Path) -> None:
    home = tmp_path / "dotfiles"
    home.mkdir()
    (home / "agents.yaml").write_text("agents:\n  - name: a\n    repo: a\n", encoding="utf-8")
    here = tmp_path / "work"
    (here / "sub").mkdir(parents=True)
    (here / "fleet.yaml").symlink_to(home / "agents.yaml")
    (here / "sub" / "mine.yaml").write_text("agents:\n  - name: b\n    repo: b\n", encoding="utf-8")
    (here / "near.yaml").symlink_to("sub/mine.yaml")
    far = cli(["fleet", "status"], cwd=here)
    assert far.code == ExitCode.USAGE
    assert far.err.endswith(f"never through a link: pass --fleet with the file itself (--fleet {home / 'agents.yaml'})"
                            "\n"), far.err
    near = cli(["fleet", "pending", "--fleet", "near.yaml"], cwd=here)
    assert near.err.endswith("pass --fleet with the file itself (--fleet sub/mine.yaml)\n"), near.err
    named = cli(["fleet", "pending", "--fleet", "sub/mine.yaml"], cwd=here)      # the file named is the one read
    assert "sub/mine.yaml:2: GM931 b: b is not a directory" in named.err, named.err
    (here / "gone.yaml").symlink_to("nowhere.yaml")                      # a link to nothing names nothing to pass
    assert cli(["fleet", "status", "--fleet", "gone.yaml"], cwd=here).err.endswith("with the file itself\n")


def test_pages_off_names_the_fleet_file_it_read(cli, tmp_path: Path) -> None:
    make_repo(tmp_path / "writer")
    (tmp_path / "team.yaml").write_text("agents:\n  - name: writer\n    repo: writer\n", encoding="utf-8")
    done = cli(["fleet", "pages", "--fleet", "team.yaml"], cwd=tmp_path)
    assert done.code == ExitCode.OK
    assert done.out.startswith("GitHub Pages: off in team.yaml, so nothing is published"), done.out
    assert not (tmp_path / "fleet-pages").exists()


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be"])
def test_a_fleet_file_saved_as_utf16_says_so_and_to_save_it_as_utf8(cli, tmp_path: Path, codec: str) -> None:
    """PowerShell's `>` writes UTF-16 with its byte-order mark: "invalid start byte" named no fix."""
    data = "agents:\n  - name: a\n    repo: a\n".encode(codec)
    (tmp_path / "fleet.yaml").write_bytes(data if data.startswith((b"\xff\xfe", b"\xfe\xff")) else b"\xfe\xff" + data)
    done = cli(["fleet", "status"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE
    assert done.err == ("gitmem: fleet.yaml:1: GM930 not valid UTF-8 (it is saved as UTF-16, which starts with its "
                        "byte-order mark): save it as UTF-8\n")


def test_the_current_folder_given_as_the_fleet_file_names_the_file_in_it(cli, tmp_path: Path) -> None:
    """`--fleet .` was named by its empty name, and the fix offered was `/fleet.yaml`, at the top of the disk."""
    done = cli(["fleet", "status", "--fleet", "."], cwd=tmp_path)
    assert done.code == ExitCode.USAGE
    assert done.err == ("gitmem: .:1: GM930 . is a directory, not a fleet file: pass --fleet ./fleet.yaml (or wherever "
                        "its fleet file is)\n")


def test_every_json_answer_opens_with_the_moment_the_fleet_was_read(cli, tmp_path: Path) -> None:
    """A script reading the three answers found `now` in `pending` and `status`, and none in `dispatch`."""
    make_repo(tmp_path / "writer")
    (tmp_path / "fleet.yaml").write_text("agents:\n  - name: writer\n    repo: writer\n", encoding="utf-8")
    heads = {}
    for command in (["pending"], ["status"], ["dispatch", "--dry-run"]):
        done = cli(["fleet", *command, "--json"], cwd=tmp_path)
        assert done.code == ExitCode.OK, done.err
        heads[command[0]] = list(json.loads(done.out))[:3]
    assert heads == {name: ["now", "failed", "unreadable"] for name in ("pending", "status")} | {
        "dispatch": ["now", "dry_run", "failed"]}


def test_a_missing_relative_repo_says_where_it_was_looked_for(cli, tmp_path: Path) -> None:
    """`--fleet team/fleet.yaml` reads `repo: writer` as team/writer: "writer is not a directory" sent the human
    looking beside them, where a writer/ may well be."""
    make_repo(tmp_path / "writer")
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "fleet.yaml").write_text("agents:\n  - name: writer\n    repo: writer\n", encoding="utf-8")
    done = cli(["fleet", "status", "--fleet", "team/fleet.yaml"], cwd=tmp_path)
    assert done.code == ExitCode.USAGE
    assert (f"team/fleet.yaml:2: GM931 writer: writer is not a directory ({tmp_path / 'team' / 'writer'}: a relative "
            "repo is read from the fleet file's folder)") in done.out, done.out


def test_a_fleet_piped_in_with_fleet_dash_is_read_from_standard_input(cli, tmp_path: Path) -> None:
    """`generate-fleet | gitmem fleet status --fleet -`: it said "no fleet file here" about a file named `-`. Its
    relative repos are read from the current folder (a pipe has none of its own), its errors name `<stdin>`."""
    make_repo(tmp_path / "writer")
    piped = "agents:\n  - name: writer\n    repo: writer\n  - name: gone\n    repo: gone\n"
    done = cli(["fleet", "status", "--fleet", "-"], cwd=tmp_path, stdin=piped)
    assert done.code == ExitCode.USAGE, done.err          # `gone` cannot be read; `writer` is
    assert done.out.startswith("2 agents: 1 unreadable, 1 no cycles yet\n"), done.out
    assert f"<stdin>:4: GM931 gone: gone is not a directory ({tmp_path / 'gone'}" in done.out, done.out
    assert "no fleet file here" not in done.err
    twice = cli(["fleet", "pending", "--fleet", "-"], cwd=tmp_path, stdin=piped.replace("gone", "again").replace(
        "repo: again", "repo: ./writer/"))
    assert twice.code == ExitCode.USAGE and twice.out == ""
    assert twice.err.startswith("gitmem: <stdin>:4: GM932 agents[1] (again): reads the same repository"), twice.err
    empty = cli(["fleet", "pages", "--fleet", "-"], cwd=tmp_path, stdin="")
    assert empty.err == f"gitmem: <stdin>:1: {EMPTY}\n"


def test_a_fleet_piped_into_the_gitmem_command_is_read(tmp_path: Path) -> None:
    """The same through a real pipe into the installed command, as a generator's output reaches it."""
    import subprocess
    import sys

    make_repo(tmp_path / "writer")
    done = subprocess.run([sys.executable, "-m", "gitmem", "fleet", "pending", "--json", "--fleet", "-"],
                          input=b"agents:\n  - name: writer\n    repo: writer\n", cwd=tmp_path, capture_output=True,
                          check=False)
    assert done.returncode == ExitCode.OK, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["failed"], answer["unreadable"], answer["decisions"]) == (False, [], [])
