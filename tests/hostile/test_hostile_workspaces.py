"""Hostile agents, workspaces: a cycle of one workspace writes only its own memory.

A repository holds two agents, the default workspace and `w2`. The default one's agent (a script run by the
`command` backend, through the real runner) goes after w2's memory: it answers w2's pending decision as the
human, empties w2's LOG, rewrites w2's NOW, LESSONS and RULES, deletes a file, puts a link in its place. Every
such edit is put back as HEAD has it, with a note in Evidence, and the cycle commit holds none of it. `check`
and `verify` look at every workspace unless told one, and a commit authored as the agent that writes two
workspaces' memory is GM923 under rules version 3 (a human's commit may).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import decisions, lessons, log
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.cycle_support import file_at, is_clean
from tests.support.helpers import AGENT, GitRepo, fill_in_rules
from tests.support.hostile import GITMEM, command_agent, evidence, no_traceback

W2 = ("w2/NOW.md", "w2/DECISIONS.md", "w2/LOG.md", "w2/LESSONS.md", "w2/RULES.md")


@pytest.fixture
def two(memrepo: GitRepo, cli) -> GitRepo:
    """The template with a second workspace `w2`, which has a pending decision, a LOG entry and a lesson."""
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "\nworkspaces:\n  w2:\n    memory_dir: w2\n")
    made = cli(["init", "."], cwd=memrepo.path)
    assert made.code == ExitCode.OK, made.err
    fill_in_rules(memrepo.path)
    w2 = MemoryWriter(Workspace.at(memrepo.path, workspace="w2"))
    w2.add_log_entry(task="w2's first task", outcome="built", result="done")
    w2.ask_decision(title="Which database for w2?", recommendation="SQLite")
    w2.add_lesson(title="w2 learned this", happened="h", why="w", change="c")
    memrepo.stage(*[p.relative_to(memrepo.path).as_posix() for p in memrepo.path.rglob("*")
                    if p.is_file() and ".git" not in p.parts])
    memrepo.commit("a second workspace, w2")
    return memrepo


# Refused at the command inside a cycle (exit 1); the runner would revert it anyway.
ANSWERED = f"""
done = subprocess.run([{str(GITMEM)!r}, 'decision', 'answer', 'D-0001', '--answer', 'Postgres', '-w', 'w2'],
                      check=False, cwd=root)
assert done.returncode == 1, done.returncode
"""
# Rules 4: an answer written in place, the block not moved.
IN_PLACE = """
from pathlib import Path
p = Path(root, 'w2/DECISIONS.md')
text = p.read_text()
p.write_text(text.replace('\\n\\n## Resolved', '\\n- Answer: Postgres\\n- Answered: 2026-12-01 09:00 UTC by Ada '
                                                'Human <ada@example.com>\\n\\n## Resolved', 1))
assert 'Answer: Postgres' in p.read_text()
"""
BY_HAND = """
from pathlib import Path
p = Path(root, 'w2/DECISIONS.md')
text = p.read_text()
head, _, body = text.partition('## Pending')
item = body.split('## Resolved')[0]
p.write_text(head + '## Pending\\n\\n## Resolved\\n' + item.rstrip() +
             '\\n- Answer: Postgres\\n- Answered: 2026-12-01 09:00 by Ada Human <ada@example.com>\\n')
"""
EMPTIED = "open(root + '/w2/LOG.md', 'w').close()\n"
EDITS = """
from pathlib import Path
for name in ('NOW.md', 'LESSONS.md', 'RULES.md'):
    p = Path(root, 'w2', name)
    p.write_text(p.read_text() + '\\nthe default agent was here\\n')
"""
THROUGH_CLI = f"""
for argv in (['log', 'add', '--task', 'x', '--outcome', 'built', '--result', 'r'],
             ['now', 'add', '--did', 'd', '--human', 'h', '--next', 'n'],
             ['lesson', 'add', '--title', 't', '--happened', 'h', '--why', 'w', '--change', 'c']):
    subprocess.run([{str(GITMEM)!r}, *argv, '-w', 'w2', '--json'], check=False, cwd=root)
"""
DELETED = "os.remove(root + '/w2/LESSONS.md')\nos.remove(root + '/w2/RULES.md')\n"
LINKED = "os.remove(root + '/w2/DECISIONS.md')\nos.symlink('/etc/hostname', root + '/w2/DECISIONS.md')\n"
DIRECTORY = "os.remove(root + '/w2/NOW.md')\nos.mkdir(root + '/w2/NOW.md')\nopen(root + '/w2/NOW.md/x', 'w').close()\n"
# The directory itself swapped for a link: a restore that follows it writes where it points (the agent's own
# memory, or outside the tree), and w2's files would be committed as gone.
DIR_LINK_OWN = "import shutil\nshutil.rmtree(root + '/w2')\nos.symlink('.', root + '/w2')\n"
DIR_LINK_OUT = ("import shutil, tempfile\nshutil.rmtree(root + '/w2')\nout = tempfile.mkdtemp()\n"
                "open(out + '/DECISIONS.md', 'w').write('# DECISIONS\\n')\nos.symlink(out, root + '/w2')\n"
                "open(os.environ['HOSTILE_OUT'], 'w').write(out)\n")
DIR_MOVED = "os.rename(root + '/w2', root + '/w2-moved')\n"

ATTACKS = {"answer-as-human": (ANSWERED, []), "resolve-by-hand": (BY_HAND, ["w2/DECISIONS.md"]),
           "answer-in-place-by-hand": (IN_PLACE, ["w2/DECISIONS.md"]),
           "empty-log": (EMPTIED, ["w2/LOG.md"]), "edit-now-lessons-rules": (EDITS, list(W2[0:1] + W2[3:])),
           "write-through-cli": (THROUGH_CLI, ["w2/NOW.md", "w2/LESSONS.md"]),
           "delete": (DELETED, ["w2/LESSONS.md", "w2/RULES.md"]), "link": (LINKED, ["w2/DECISIONS.md"]),
           "directory": (DIRECTORY, ["w2/NOW.md"]), "dir-link-own": (DIR_LINK_OWN, list(W2)),
           "dir-link-outside": (DIR_LINK_OUT, list(W2)), "dir-moved": (DIR_MOVED, list(W2))}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_cycle_reverts_every_edit_of_another_workspaces_memory(tmp_path: Path, two: GitRepo, cli,
                                                                 attack: str, monkeypatch: pytest.MonkeyPatch) -> None:
    body, touched = ATTACKS[attack]
    command_agent(tmp_path, two, body, pass_env=("HOSTILE_OUT",))
    monkeypatch.setenv("HOSTILE_OUT", str(tmp_path / "out-path"))
    before = {rel: file_at(two.repo, "HEAD", rel) for rel in W2}

    result = cli(["cycle", "--json"], cwd=two.path)

    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    report = json.loads(result.out)
    assert report["outcome"] == "built"
    commit = two.repo.head.peel()
    assert str(commit.id) == report["commit"] and commit.author.email == AGENT[1]
    assert {rel: file_at(two.repo, "HEAD", rel) for rel in W2} == before       # the cycle commit has none of it
    assert {rel: two.read(rel) for rel in W2} == before                         # nor the work tree
    assert is_clean(two)
    if (tmp_path / "out-path").exists():                                       # nothing written where it pointed
        assert [p.name for p in Path((tmp_path / "out-path").read_text()).iterdir()] == ["DECISIONS.md"]
    noted = evidence(two)
    for rel in touched:
        assert f"reverted the agent's edit of {rel}" in noted, noted
    pending = decisions.parse(two.read("w2/DECISIONS.md"))
    assert [d.id for d in pending.pending] == ["D-0001"] and not pending.resolved
    assert [e.get("Task") for e in log.parse(two.read("w2/LOG.md")).entries] == ["w2's first task"]
    # The agent's own workspace got its cycle entry as usual, and verify passes the whole history.
    assert log.parse(two.read("LOG.md")).entries[-1].cycle == report["cycle"]
    verified = cli(["verify", "--range", f"{_root(two)}..HEAD"], cwd=two.path)
    assert verified.code == ExitCode.OK, verified.out + verified.err


def test_a_cycle_of_w2_may_not_write_the_default_workspace_either(tmp_path: Path, two: GitRepo, cli) -> None:
    command_agent(tmp_path, two, "open(root + '/DECISIONS.md', 'a').write('\\nw2 was here\\n')\n"
                                 + EMPTIED.replace("/w2/LOG.md", "/LOG.md"), write_memory=False)
    script = next(tmp_path.glob("hostile_agent_*.py"))
    script.write_text(script.read_text() + "".join(
        f"subprocess.run([{str(GITMEM)!r}, {', '.join(map(repr, argv))}, '-w', 'w2'], check=True, cwd=root)\n"
        for argv in (("log", "add", "--task", "t", "--outcome", "built", "--result", "r"),
                     ("now", "add", "--did", "d", "--human", "nothing", "--next", "n"))))
    before = {rel: file_at(two.repo, "HEAD", rel) for rel in ("DECISIONS.md", "LOG.md")}

    result = cli(["cycle", "--json", "--workspace", "w2"], cwd=two.path)

    assert result.code == ExitCode.OK, result.err
    assert {rel: file_at(two.repo, "HEAD", rel) for rel in before} == before
    noted = log.parse(two.read("w2/LOG.md")).entries[-1].get("Evidence") or ""
    assert "reverted the agent's edit of LOG.md, the LOG of workspace (default)" in noted
    assert "reverted the agent's edit of DECISIONS.md" in noted


# -- check and verify look at every workspace ------------------------------------------------------------

def _root(repo: GitRepo) -> str:
    return str(list(repo.repo.walk(repo.repo.head.target))[-1].id)


def _forge(repo: GitRepo, *, author: tuple[str, str]) -> None:
    """One commit that logs in the default workspace and, in w2, resolves D-0001 as the human and empties LOG."""
    default = MemoryWriter(repo.ws())
    default.add_log_entry(task="a task", outcome="built", result="done")
    text = repo.read("w2/DECISIONS.md")
    item = decisions.parse(text).pending[0]
    repo.write("w2/DECISIONS.md", decisions.render(decisions.move_to_resolved(
        decisions.parse(text), item.id, answer="Postgres", answered=default.now(), name="Ada Human",
        email="ada@example.com")))
    repo.write("w2/LOG.md", "")
    repo.stage("LOG.md", "w2/DECISIONS.md", "w2/LOG.md")
    repo.commit("gitmem: cycle 1 · built · a task\n\nGitmem-Cycle: 1\nGitmem-Rules: 3\n", author=author)


def test_verify_without_a_workspace_reports_a_forged_cross_workspace_commit(two: GitRepo, cli) -> None:
    start = two.head()
    _forge(two, author=AGENT)

    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=two.path)

    assert result.code == ExitCode.VIOLATIONS
    found = {(line.split(": ")[0], line.split(": ")[1].split()[0]) for line in result.lines}
    assert ("w2/DECISIONS.md:1", "GM923") in found and ("LOG.md:1", "GM923") in found
    assert any(line.startswith("w2/DECISIONS.md:") and " GM207 " in line for line in result.lines)
    assert any(line.startswith("w2/LOG.md:") and " GM301 " in line for line in result.lines)
    # Each line once, though two workspaces were checked.
    assert len(result.lines) == len(set(result.lines))
    narrowed = cli(["verify", "--range", f"{start}..HEAD", "--workspace", "w2"], cwd=two.path)
    assert narrowed.code == ExitCode.VIOLATIONS and not any(" GM301 " in line and line.startswith("LOG.md")
                                                            for line in narrowed.lines)


def test_a_humans_commit_may_change_every_workspace(two: GitRepo, cli) -> None:
    start = two.head()
    MemoryWriter(two.ws()).add_log_entry(task="a task", outcome="built", result="done")
    MemoryWriter(Workspace.at(two.path, workspace="w2")).add_lesson(title="t", happened="h", why="w", change="c")
    two.stage("LOG.md", "w2/LESSONS.md")
    two.commit("the human writes both")

    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=two.path)

    assert result.code == ExitCode.OK, result.out
    assert [lesson.id for lesson in lessons.parse(two.read("w2/LESSONS.md")).lessons] == ["L-0001", "L-0002"]


def test_an_agent_commit_of_one_workspace_only_passes(two: GitRepo, cli) -> None:
    start = two.head()
    MemoryWriter(Workspace.at(two.path, workspace="w2")).add_log_entry(task="w2 task", outcome="built", result="r")
    two.stage("w2/LOG.md")
    two.commit("gitmem: cycle 2 · built · w2 task\n\nGitmem-Rules: 3\n", author=AGENT)

    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=two.path).code == ExitCode.OK


@pytest.mark.parametrize("worktree", [True, False])
def test_check_without_a_workspace_checks_every_workspace(two: GitRepo, cli, worktree: bool) -> None:
    two.write("w2/LOG.md", "")
    if not worktree:
        two.stage("w2/LOG.md")
    args = ["check", "--worktree"] if worktree else ["check"]

    result = cli(args, cwd=two.path)

    assert result.code == ExitCode.VIOLATIONS
    assert any(line.startswith("w2/LOG.md:") and " GM301 " in line for line in result.lines), result.out


def test_verify_reaches_commits_from_before_a_workspace_existed(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    first = _root(memrepo)
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "\nworkspaces:\n  w2:\n    memory_dir: w2\n")
    assert cli(["init", "."], cwd=memrepo.path).code == ExitCode.OK
    memrepo.stage(*[p.relative_to(memrepo.path).as_posix() for p in memrepo.path.rglob("*")
                    if p.is_file() and ".git" not in p.parts])
    memrepo.commit("add w2")

    for args in ([], ["--workspace", "w2"]):
        result = cli(["verify", "--range", f"{first}~0..HEAD", *args], cwd=memrepo.path)
        assert result.code == ExitCode.OK, result.out + result.err
