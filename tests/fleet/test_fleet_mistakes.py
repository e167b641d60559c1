"""A new user's fleet file with mistakes in it, read through the real CLI: a path that is missing, a folder that
is no git repository, a git repository without gitmem memory, a file where a folder belongs, a workspace the
agent does not have, and a private repository the fleet has no credentials for, beside an agent that reads
fine and one with the human's uncommitted work in it. Every mistake is one `path:line: GM931 agent: error`
line at its entry of the fleet file (where the human fixes it), in every command and its --json, the other
agents are still read, and nothing of any agent changes."""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import fleet_home, make_repo
from tests.support.loopback import QuietHandler, serving

# (agent, the line of its entry, words of its error)
MISTAKES = [
    ("missing", 6, "nowhere is not a directory"),
    ("plain", 8, "no gitmem memory here"),
    ("folder", 10, "is not inside a git repository"),
    ("file", 12, "notes.txt is not a directory"),
    ("spare-nope/nope", 14, "GM929 unknown workspace 'nope'"),
    ("private", 17, "could not read Username"),
    ("gap", 19, "LOG.md is missing from its memory"),
]
DIAGNOSTIC = re.compile(r"fleet\.yaml:([0-9]+): GM931 ([^:]+): (.+)")


class PrivateGitHost(QuietHandler):
    """A git host that asks for credentials, as GitHub does of a private repository read without them."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="GitHub"')
        self.send_header("content-length", "0")
        self.end_headers()


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as patch, serving(PrivateGitHost) as url:
        root = fleet_home(patch, tmp_path_factory, "fleet-mistakes")
        make_repo(root / "good")
        make_repo(root / "spare")        # its own: `good` reads every workspace of its repository (GM932)
        dirty = make_repo(root / "dirty")
        dirty.write("NOW.md", dirty.read("NOW.md") + "\nthe human's note, not committed yet\n")
        # LOG.md deleted in the work tree, still committed: read as it is, the row said "no cycles yet", however
        # many cycles its LOG held, where `gitmem status` there says the file is missing.
        gap = make_repo(root / "gap")
        (gap.path / "LOG.md").unlink()
        plain = root / "plain"
        plain.mkdir()
        git(plain, "init", "-q")
        (root / "folder").mkdir()
        (root / "notes.txt").write_text("not a repository\n", encoding="utf-8")
        (root / "fleet.yaml").write_text(
            "agents:\n"                                                   # 1
            "  - name: good\n    repo: good\n"                            # 2
            "  - name: dirty\n    repo: dirty\n"                          # 4
            "  - name: missing\n    repo: nowhere\n"                      # 6
            "  - name: plain\n    repo: plain\n"                          # 8
            "  - name: folder\n    repo: folder\n"                        # 10
            "  - name: file\n    repo: notes.txt\n"                       # 12
            "  - name: spare-nope\n    repo: spare\n    workspace: nope\n"   # 14
            f"  - name: private\n    repo: {url}/acme/private-agent.git\n"   # 17
            "  - name: gap\n    repo: gap\n", encoding="utf-8")                # 19
        yield root


def _snapshot(root: Path) -> dict[str, object]:
    """Everything of the agents a read could change: their files, HEADs and index."""
    found: dict[str, object] = {}
    for name in ("good", "dirty", "plain", "gap"):
        for path in sorted((root / name).rglob("*")):
            if path.is_file() and "objects" not in path.parts:
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


def _diagnostics(text: str) -> dict[str, tuple[int, str]]:
    found = {}
    for line in text.splitlines():
        match = DIAGNOSTIC.fullmatch(line.removeprefix("gitmem: "))
        if match:
            found[match[2]] = (int(match[1]), match[3])
    return found


def test_every_mistake_is_one_line_at_its_entry_and_the_other_agents_still_read(fleet: Path, cli) -> None:
    before = _snapshot(fleet)
    for command, stream in (("status", "out"), ("pending", "err"), ("report", "err"), ("dispatch", "err")):
        argv = ["fleet", command, "--timeout", "30", *(["--dry-run"] if command == "dispatch" else [])]
        done = cli(argv, cwd=fleet)
        assert done.code == ExitCode.USAGE, (command, done.out, done.err)
        said = _diagnostics(getattr(done, stream))
        assert sorted(said) == sorted(label for label, _, _ in MISTAKES), (command, done.out, done.err)
        for label, line, words in MISTAKES:
            assert said[label][0] == line, (command, label, said)
            assert words in said[label][1], (command, label, said)
    status = cli(["fleet", "status"], cwd=fleet).out
    assert re.search(r"^good +no cycles yet ", status, re.M) and re.search(r"^dirty +no cycles yet ", status, re.M)
    public = cli(["fleet", "status", "--public"], cwd=fleet)
    hidden = _diagnostics(public.err)
    assert sorted(hidden) == sorted(label for label, _, _ in MISTAKES)
    assert all(text.startswith("could not be read (the error is left out") for _, text in hidden.values())
    assert _snapshot(fleet) == before                  # nothing of any agent changed, the uncommitted note least


def test_the_public_page_says_which_agents_could_not_be_read_and_where(fleet: Path, cli, tmp_path: Path) -> None:
    """`fleet pages` exited 2 for an agent it could not read and said nothing of which: a public run log now
    has its line (without git's error, which may name private repositories)."""
    public = fleet / "public.yaml"
    public.write_text((fleet / "fleet.yaml").read_text(encoding="utf-8") + "pages: public\n", encoding="utf-8")
    done = cli(["fleet", "pages", "--fleet", "public.yaml", "--out", str(tmp_path / "site") + "/",
                "--timeout", "30"], cwd=fleet)
    assert done.code == ExitCode.USAGE and (tmp_path / "site" / "index.html").is_file()
    said = [line for line in done.err.splitlines() if " GM931 " in line]
    assert [line.split(" GM931 ")[0] for line in said] == [f"gitmem: public.yaml:{line}:" for _, line, _ in MISTAKES]
    assert all(line.endswith("could not be read (the error is left out of the public view; run without --public "
                             "where only the agents' readers see it)") for line in said), said


def test_the_json_says_where_each_mistake_is(fleet: Path, cli) -> None:
    for command in ("status", "pending", "dispatch"):
        dry = ["--dry-run"] if command == "dispatch" else []
        answer = json.loads(cli(["fleet", command, "--json", "--timeout", "30", *dry], cwd=fleet).out)
        assert answer["failed"] is True
        found = {item["agent"]: item for item in answer["unreadable"]}
        assert sorted(found) == sorted(label for label, _, _ in MISTAKES)
        for label, line, words in MISTAKES:
            item = found[label]
            assert item["at"] == f"fleet.yaml:{line}" and item["code"] == "GM931" and words in item["error"]
        public = json.loads(cli(["fleet", command, "--json", "--public", "--timeout", "30", *dry], cwd=fleet).out)
        assert all(set(item) == {"agent", "at", "code"} for item in public["unreadable"]), public["unreadable"]


def test_a_private_repository_read_without_credentials_says_what_to_give(fleet: Path, cli) -> None:
    """git's own words ("could not read Username ...: terminal prompts disabled") do not say that the repository
    is private nor what the fleet reads one with: the line now does."""
    done = cli(["fleet", "status", "--json", "--timeout", "30"], cwd=fleet)
    error = next(item["error"] for item in json.loads(done.out)["unreadable"] if item["agent"] == "private")
    assert error.startswith("`git fetch` failed: fatal: could not read Username for 'http://127.0.0.1:"), error
    assert error.endswith(": a private repository is read with GITMEM_FLEET_TOKEN (a token with Contents: "
                          "read-only on it; sent to GitHub only) or with git's own credentials (a credential "
                          "helper, an SSH key): see docs/fleet.md, Credentials"), error


@pytest.mark.parametrize("command", ["pending", "status", "report", "pages", "dispatch"])
def test_the_help_of_fleet_names_every_key_a_fleet_file_takes(cli, tmp_path: Path, command: str) -> None:
    """A new user writes the fleet file from `--help`: a key it leaves out (github, workflow, the caps, budget,
    pages) is one the user never learns of there, and a misspelt guess is refused (GM929)."""
    from gitmem.fleet.fleetfile import KEYS, TOP_KEYS

    done = cli(["fleet", command, "--help"], cwd=tmp_path)
    assert done.code == ExitCode.OK
    said = " ".join(done.out.split())
    fleet = said[said.index("--fleet FILE"):]
    assert all(key in fleet.split("[default")[0] for key in (*KEYS, *TOP_KEYS)), fleet
