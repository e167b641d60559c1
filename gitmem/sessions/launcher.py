"""How an agent CLI starts gitmem: the committed launcher `.gitmem/gitmem` and the one command every agent config
(Claude Code's hooks and `.mcp.json`, Codex's and Cursor's MCP entries, the protocol text) calls it with.

An agent CLI started outside the activated venv has no `gitmem` on PATH, and a login shell (Codex's `bash -lc`)
resets PATH. So the configs `gitmem init --agent` writes never name `gitmem` bare, nor an absolute path (they
are committed: every clone and the Actions runner read them). They run `sh .gitmem/gitmem` from the top of the
work tree, found with `git rev-parse --show-toplevel`, which holds wherever in the tree the CLI was started;
of nested work trees the outermost with a launcher wins (FIND), so a repository the agent made inside the tree
never supplies the launcher.
The script runs under `sh`, so it needs no executable bit (a checkout with `core.fileMode=false` works too).

The launcher runs with the human's rights: from the hooks and MCP servers of an interactive session. The agent
can write the work tree (in a cycle, inside the sandbox too), so what it runs is chosen with that in mind,
first found wins:

1. the repository's own `.venv/bin/gitmem`: the venv the template tells the human to make. It is the human's
   as much as `. .venv/bin/activate` is: inside gitmem's sandbox `.venv` is read-only (and cannot be created),
   and outside it a cycle that creates or changes it is reported (gitmem.agents.ignored_tool_dirs). Never a symbolic
   link (pip writes a file; a link could point anywhere the agent writes): one is skipped with a warning;
2. `gitmem` on PATH, from absolute entries outside this work tree only: an empty or relative entry (`.`,
   `bin`) is the working directory, which the agent writes, and an entry inside the tree is the agent's too;
3. `python3 -P -m gitmem`, python3 found the same way; `-P` keeps the working directory off `sys.path`, so a
   `gitmem/` folder the agent left in the tree is never imported in place of the installed package.

Nothing else in the tree is ever run. Neither found: one line on stderr saying what to install, exit 127 (what a
shell says of a missing command, which `gitmem hook` hosts treat as a non-blocking failure).
"""
from __future__ import annotations

import shlex
from collections.abc import Sequence

from gitmem import install_spec

LAUNCHER = ".gitmem/gitmem"               # relative to the top of the work tree; committed
MARKER = "# gitmem launcher"              # its second line: a file starting so is gitmem's, and is kept current
# `sh -c` text: the launcher at the top of the work tree, wherever in it the agent CLI started the command. Not
# in a work tree with a launcher: exit 127, never 2 (Claude Code reads a hook's exit 2 as "block").
# The outermost work tree with a launcher wins: the agent can make a repository of its own inside the tree
# (`git init sub`, or a `sub/.git` file naming a git directory it made) with a `.gitmem/gitmem` of its own,
# which a session that has `cd`'d into `sub/` would otherwise run with the human's rights. Each step up is to
# the work tree holding the parent directory, so the loop ends at the outermost one (at most one per level).
FIND = (f'top=$(git rev-parse --show-toplevel) || top=; found=; '
        f'while [ -n "$top" ]; do [ -f "$top/{LAUNCHER}" ] && found=$top; '
        'up=$(CDPATH= cd -P -- "$top/.." 2>/dev/null && git rev-parse --show-toplevel 2>/dev/null) || break; '
        '[ "${#up}" -lt "${#top}" ] || break; top=$up; done; '
        f'[ -n "$found" ] && exec sh "$found/{LAUNCHER}" "$@"; '
        f'echo "gitmem: no {LAUNCHER} at the top of a git work tree here: run gitmem init --agent there" >&2; '
        'exit 127')

SCRIPT = f"""#!/bin/sh
{MARKER}, written by `gitmem init --agent`; commit it. Agent CLIs' hooks and MCP entries run it as
#   sh "$(git rev-parse --show-toplevel)/{LAUNCHER}" ARGS...
# so gitmem is found however the CLI was started. It runs with your rights; the agent can write this work tree,
# so it runs nothing from the tree but the repository's own venv. First found wins:
#   1. .venv/bin/gitmem of this repository (the venv you made), a file, not a link (read-only in gitmem's
#      sandbox; a cycle that changes .venv says so in its output and in `gitmem status`);
#   2. gitmem on PATH, absolute entries outside this work tree only (an empty or relative entry is the
#      working directory, which the agent writes);
#   3. python3 -P -m gitmem, python3 found the same way (-P: the working directory is not on sys.path).
set -f
case $0 in */*) here=${{0%/*}} ;; *) here=. ;; esac      # no `dirname`: PATH may hold nothing usable
top=$(CDPATH= cd -P -- "$here/.." && pwd -P) || exit 127
if [ -L "$top/.venv/bin/gitmem" ]; then      # pip writes a file; a link could point anywhere the agent writes
    echo "gitmem: skipped $top/.venv/bin/gitmem: it is a symbolic link, not the script pip installs" >&2
elif [ -f "$top/.venv/bin/gitmem" ] && [ -x "$top/.venv/bin/gitmem" ]; then
    exec "$top/.venv/bin/gitmem" "$@"
fi
outside() {{    # a PATH entry that is absolute and outside this work tree
    case $1 in /*) ;; *) return 1 ;; esac
    real=$(CDPATH= cd -P -- "$1" 2>/dev/null && pwd -P) || return 1
    case $real/ in "$top"/*) return 1 ;; esac
}}
found() {{      # the first `$1` on PATH in an entry outside the tree
    IFS=:
    for dir in $PATH; do
        if [ -f "$dir/$1" ] && [ -x "$dir/$1" ] && outside "$dir"; then
            unset IFS
            printf '%s\\n' "$real/$1"
            return 0
        fi
    done
    unset IFS
    return 1
}}
if command=$(found gitmem); then
    exec "$command" "$@"
fi
if python=$(found python3) && "$python" -P -c 'import gitmem' 2>/dev/null; then
    exec "$python" -P -m gitmem "$@"
fi
echo "gitmem: not found (looked in $top/.venv/bin, on PATH, and for python3 -P -m gitmem): install it in" \\
     "this repository: python3 -m venv .venv && .venv/bin/pip install '{install_spec("agents")}'" >&2
exit 127
"""


def launcher_command(*args: str) -> list[str]:
    """The argv every agent config uses to run `gitmem ARGS`: `sh -c` finding the launcher at the top of the
    work tree. Portable: no absolute path, no executable bit, no dependence on PATH holding gitmem."""
    return ["sh", "-c", FIND, "gitmem", *args]


def launcher_shell(*args: str) -> str:
    """`launcher_command(*args)` as one shell command line, for configs that take a string (Claude Code's hooks)."""
    return shlex.join(launcher_command(*args))


def renewed_command(argv: Sequence[object]) -> list[str] | None:
    """`argv` with today's FIND when it is a launcher command any gitmem wrote (`sh -c <a finder of LAUNCHER>
    gitmem ARGS…`, the user's own ARGS kept), else None: it is someone else's. An older release's finder took the
    nearest work tree's launcher, which a repository the agent made inside the tree supplies; `init --agent`
    renews it in place, where a second entry beside it would keep the old finder and run every hook twice."""
    if (len(argv) < 4 or list(argv[:2]) != ["sh", "-c"] or argv[3] != "gitmem" or not isinstance(argv[2], str)
            or not argv[2].startswith("top=$(git rev-parse --show-toplevel)") or f"$top/{LAUNCHER}" not in argv[2]
            or not all(isinstance(arg, str) for arg in argv[4:])):
        return None
    return launcher_command(*(str(arg) for arg in argv[4:]))


def renewed_shell(line: str) -> str | None:
    """`renewed_command` of a command line (Claude Code's hooks), as a command line; None when it is not one."""
    try:
        argv = shlex.split(line)
    except ValueError:           # unbalanced quotes: not a line gitmem wrote
        return None
    found = renewed_command(argv)
    return shlex.join(found) if found is not None else None


def is_ours(text: str) -> bool:
    """Whether a file at LAUNCHER is gitmem's launcher (any version), which `init --agent` keeps current."""
    lines = text.split("\n", 2)
    return len(lines) > 1 and lines[1].startswith(MARKER)
