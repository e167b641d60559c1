"""fleet.yaml: the agents one human looks after, validated like gitmem.yaml.

The file is data that anyone with write access to the fleet repository can change, and its values reach git's
command line and file names: each is checked once here, and an error names the file and line in one line
(exit 2). Besides `agents:` only `pages:` is read; an unknown key is an error rather than a warning, because a
misspelt `branch` would silently read the wrong branch of every agent.

    agents:
      - name: writer
        repo: https://github.com/acme/writer-agent
        branch: main              # default: the remote's default branch
        workspace: docs           # default: every workspace of its gitmem.yaml
        stall_after: 8h           # default: twice the interval of its workflow's schedule
        github: acme/writer-agent # default: the repo's owner/name when it is a GitHub URL
        workflow: gitmem.yml      # the workflow `gitmem fleet dispatch` starts (default gitmem.yml)
        tokens_per_day: 2000000   # optional caps on what its cycles record in Evidence today
        cost_per_day: 5
    budget:                       # optional caps across the fleet, per day
      tokens_per_day: 20000000
      cost_per_day: 40
    pages: off                    # or `public`: `gitmem fleet pages` writes the verdicts-and-counts page
"""
from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from gitmem import codes
from gitmem.config import load_yaml, refused
from gitmem.config.validate import kind_in_words, text_problem, workspace_name_problem
from gitmem.confined import files
from gitmem.cycle.allowance import Caps
from gitmem.fleet.duplicates import refuse_twice
from gitmem.fleet.place import Place, entry_place

FLEET_NAME = "fleet.yaml"
STDIN, STDIN_SHOWN = "-", "<stdin>"    # `--fleet -` reads the fleet from standard input, named so in diagnostics
MAX_BYTES = 1024 * 1024
MAX_AGENTS = 1000
KEYS = ("name", "repo", "branch", "workspace", "stall_after", "github", "workflow", "tokens_per_day", "cost_per_day")
CAP_KEYS = ("tokens_per_day", "cost_per_day")
TOP_KEYS = ("agents", "budget", "pages")
# owner/name as GitHub allows them (a name is never `.` or `..`): it goes into the API's paths, with the token.
GITHUB_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,38}/(?!\.\.?\Z)[A-Za-z0-9._-]{1,100}\Z")
WORKFLOW_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}\.ya?ml\Z")
# Where the fleet's page may be published: nowhere (the default), or GitHub Pages, which anyone can read.
PAGES = ("off", "public")
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
# Names Windows keeps for devices, with any extension (`con.html` opens the console there): an agent's name is its
# page's file name (gitmem.fleet.page), and a workspace's is one unless it gets a stem of its own.
DEVICE_NAMES = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?\Z", re.IGNORECASE)
# A branch name git accepts (git check-ref-format), narrowed: no option-like or hidden names.
BRANCH_RE = re.compile(r"(?!.*\.\.)(?!.*//)(?!.*@\{)(?!.*\.lock(?:/|\Z))[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}\Z")
DURATION_RE = re.compile(r"([1-9][0-9]{0,5})([mhd])\Z")
UNITS = {"m": 60, "h": 3600, "d": 86400}
STALL_RANGE = (600, 90 * 86400)            # 10 minutes to 90 days
SCHEMES = ("https", "http", "ssh", "git", "file")
SCP_RE = re.compile(r"[A-Za-z0-9_.-]+@[A-Za-z0-9.-]+:[^\s]+\Z")     # git@github.com:acme/agent.git


@dataclass(frozen=True)
class AgentEntry:
    name: str
    repo: str                      # a local path (relative to fleet.yaml's directory) or a git URL
    branch: str | None = None
    workspace: str | None = None
    stall_after: int | None = None  # seconds
    line: int = 0                   # where the entry starts in fleet.yaml
    github: str | None = None       # owner/name on GitHub, for `gitmem fleet dispatch`
    workflow: str = "gitmem.yml"
    caps: Caps = Caps()

    @property
    def is_url(self) -> bool:
        return is_url(self.repo)

    def local_path(self, base: Path) -> Path:
        """Where a local repo is: `~/agents/writer` as a shell reads it (fleet.yaml is written by hand, and git
        itself expands `~` in paths), a relative path from `base`, fleet.yaml's directory; links resolved."""
        given = os.path.expanduser(self.repo)
        return (base / given).resolve() if not os.path.isabs(given) else Path(given)

    def place(self, base: Path) -> Place:
        """What this entry reads, the same for each spelling of it (gitmem.fleet.place): two entries of one place
        and one workspace would read one memory twice."""
        return entry_place(self.repo, self.branch, local=None if self.is_url else self.local_path(base),
                           github=github_path(self.repo) if self.is_url else None,
                           scp=bool(SCP_RE.match(self.repo)) and "://" not in self.repo)


@dataclass(frozen=True)
class Fleet:
    path: Path                     # fleet.yaml itself
    agents: tuple[AgentEntry, ...]
    pages: str = "off"             # one of PAGES
    budget: Caps = Caps()          # across the fleet
    folder: Path | None = None     # where relative repos are read from, when not fleet.yaml's folder (stdin's)

    @property
    def base(self) -> Path:
        """The directory local repo paths are relative to: fleet.yaml's, or the current one for standard input."""
        return self.folder or self.path.parent


def is_url(repo: str) -> bool:
    return "://" in repo or bool(SCP_RE.match(repo))


def open_fleet(given: str, *, stdin: BinaryIO, cwd: Path) -> Fleet:
    """The fleet file `--fleet` names: `-` is standard input (a generator's output, piped), else the file."""
    return read_fleet_stream(stdin, cwd=cwd) if given == STDIN else load_fleet(Path(given))


def read_fleet_stream(stream: BinaryIO, *, cwd: Path) -> Fleet:
    """fleet.yaml read from `stream`, validated as a file is: its diagnostics name it `<stdin>` (`<stdin>:4: GM932
    …`), and its relative repos are read from `cwd`, as a piped file has no folder of its own."""
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise refused(codes.CONFIG_UNREADABLE, STDIN_SHOWN, f"more than {MAX_BYTES} bytes; a fleet file is at most "
                      f"{MAX_BYTES}")
    return parse_fleet(data, path=Path(STDIN_SHOWN), shown=STDIN_SHOWN, folder=cwd)


def load_fleet(path: Path) -> Fleet:
    """fleet.yaml at `path`, read as a regular file (never through a link) and validated; ConfigError else."""
    shown = str(path)     # as given (`.` for the current folder, whose name alone would be empty)
    try:
        size = files.file_size(path.parent, path.name)
        if size is None:
            raise refused(codes.CONFIG_UNREADABLE, shown,
                          "no fleet file here; write one (see docs/fleet.md) or pass --fleet FILE")
        if size > MAX_BYTES:
            raise refused(codes.CONFIG_UNREADABLE, shown, f"{size} bytes; a fleet file is at most {MAX_BYTES}")
        data = files.read_bytes(path.parent, path.name) or b""
    except files.FileRefused as err:
        # Not the memory files' wording (`git checkout HEAD -- …`): the fleet file is the human's, named by --fleet.
        # A folder is named as one (the work-tree view calls a folder holding .git a submodule), with the file to
        # pass in its place.
        if _is_folder(path):
            raise refused(codes.CONFIG_UNREADABLE, shown, f"{shown} is a directory, not a fleet file: pass --fleet "
                          f"{shown.rstrip('/')}/{FLEET_NAME} (or wherever its fleet file is)") from None
        raise refused(codes.CONFIG_UNREADABLE, shown, f"{shown} {err.what}; a fleet file is read only as a regular "
                      "file, never through a link: pass --fleet with the file itself" + _linked_to(path)) from None
    return parse_fleet(data, path=path, shown=shown)


def _linked_to(path: Path) -> str:
    """` (--fleet FILE)` naming the file a link at `path` leads to, as it is given from here (relative when it is
    below this directory): the file to pass instead. Empty when `path` is no link or leads nowhere."""
    if not os.path.islink(path):
        return ""
    target = os.path.realpath(path)
    if not os.path.isfile(target):
        return ""
    relative = os.path.relpath(target)
    return f" (--fleet {target if relative.startswith('..') else relative})"


def _is_folder(path: Path) -> bool:
    """Whether `path` itself is a directory (a link to one is a link, and says so)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def parse_fleet(data: bytes, *, path: Path, shown: str = FLEET_NAME, folder: Path | None = None) -> Fleet:
    """The fleet in `data`, validated; `path` is the file, `shown` how diagnostics name it, `folder` where relative
    repos are read from when not `path`'s folder. ConfigError at the first problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        # PowerShell's `>` and some Windows editors save UTF-16: say so, and what to save instead.
        utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        raise refused(codes.CONFIG_UNREADABLE, shown, "not valid UTF-8 " + (
            "(it is saved as UTF-16, which starts with its byte-order mark): save it as UTF-8" if utf16
            else f"({err.reason})")) from None
    raw = load_yaml(text, shown)
    if raw is None:       # nothing but blank lines and comments: a new file, or one emptied by mistake
        raise refused(codes.CONFIG_WRONG_TYPE, shown, "the fleet file is empty: write `agents:`, a list of {name, "
                      "repo} (see docs/fleet.md)")
    if not isinstance(raw, dict) or "agents" not in raw:
        raise refused(codes.CONFIG_WRONG_TYPE, shown, "expected a mapping with `agents:`, a list of {name, repo}")
    unknown = [key for key in raw if key not in TOP_KEYS]
    if unknown:
        raise refused(codes.CONFIG_UNKNOWN_NAME, shown + _line(raw, unknown[0]),
                      f"unknown key {str(unknown[0])!r}; known: {', '.join(TOP_KEYS)}")
    pages = raw.get("pages", "off")
    if pages not in PAGES:
        raise refused(codes.CONFIG_BAD_VALUE, shown + _line(raw, "pages"), f"pages: expected one of {', '.join(PAGES)}")
    budget = raw.get("budget", {})
    if not isinstance(budget, dict):
        raise refused(codes.CONFIG_WRONG_TYPE, shown + _line(raw, "budget"),
                      f"budget: expected a mapping of {', '.join(CAP_KEYS)}")
    for key in budget:
        if key not in CAP_KEYS:
            raise refused(codes.CONFIG_UNKNOWN_NAME, shown + _line(budget, key),
                          f"budget: unknown key {str(key)!r}; known: {', '.join(CAP_KEYS)}")
    fleet_caps = _caps(budget, lambda key: shown + _line(budget, key), "budget.")
    items = raw["agents"]
    if not isinstance(items, list) or not items:
        raise refused(codes.CONFIG_WRONG_TYPE, shown + _line(raw, "agents"),
                      "agents: expected a non-empty list of {name, repo}")
    if len(items) > MAX_AGENTS:
        raise refused(codes.CONFIG_BAD_VALUE, shown + _line(raw, "agents"),
                      f"{len(items)} agents; at most {MAX_AGENTS}")
    agents = tuple(_entry(item, shown, _item_line(items, index), index) for index, item in enumerate(items))
    refuse_twice(agents, base=folder or path.parent, shown=shown)
    return Fleet(path, agents, str(pages), fleet_caps, folder)


def _line(node: Any, key: Any) -> str:
    try:
        return f":{node.lc.key(key)[0] + 1}"
    except Exception:    # no position known: the file is still named
        return ""


def _item_line(items: Any, index: int) -> str:
    try:
        return f":{items.lc.item(index)[0] + 1}"
    except Exception:
        return ""


def _entry(item: Any, shown: str, line: str, index: int) -> AgentEntry:
    prefix, where = f"agents[{index}]", shown + line
    if not isinstance(item, dict):
        raise refused(codes.CONFIG_WRONG_TYPE, where, f"{prefix}: expected a mapping with name and repo")
    values: dict[str, Any] = {}
    for key, value in item.items():
        at = shown + (_line(item, key) or line)
        if key not in KEYS:
            raise refused(codes.CONFIG_UNKNOWN_NAME, at,
                          f"{prefix}: unknown key {str(key)!r}; known: {', '.join(KEYS)}")
        if key in CAP_KEYS:
            continue                      # numbers: read by _caps below
        problem = _problem(str(key), value)
        if problem is not None:
            kind = codes.CONFIG_WRONG_TYPE if problem.startswith("expected text, got") else codes.CONFIG_BAD_VALUE
            raise refused(kind, at, f"{prefix}.{key}: {problem}")
        values[str(key)] = value
    for key in ("name", "repo"):
        if key not in values:
            raise refused(codes.CONFIG_BAD_VALUE, where, f"{prefix}: `{key}` is required")
    if values.get("branch") and not is_url(values["repo"]):
        raise refused(codes.CONFIG_BAD_VALUE, shown + (_line(item, "branch") or line),
                      f"{prefix}.branch: a local repository is read as it is checked out; to read another branch give "
                      "it as a URL (file:///path/to/repo)")
    stall = values.get("stall_after")
    caps = _caps(item, lambda key: shown + (_line(item, key) or line), f"{prefix}.")
    github = values.get("github") or _github_of(str(values["repo"]))
    if github is not None and not GITHUB_RE.match(github):     # read from the URL: held to the same rule
        raise refused(codes.CONFIG_BAD_VALUE, shown + (_line(item, "repo") or line),
                      f"{prefix}.repo: its GitHub owner/name {github!r} is not one GitHub allows; give "
                      "`github: owner/name`")
    return AgentEntry(str(values["name"]), str(values["repo"]), values.get("branch"), values.get("workspace"),
                      duration_seconds(stall) if stall is not None else None, int(line[1:] or 0), github,
                      values.get("workflow") or "gitmem.yml", caps)


def _github_of(repo: str) -> str | None:
    """owner/name when `repo` is a URL on github.com (or GITHUB_SERVER_URL's host)."""
    return github_path(repo) if is_url(repo) else None


def _caps(mapping: Any, where: Any, prefix: str) -> Caps:
    """The tokens_per_day and cost_per_day of `mapping`: positive numbers (tokens whole), each optional. `where`:
    a key's `path:line`; `prefix`: the dotted path the keys are under (`budget.`)."""
    found: dict[str, Any] = {}
    for key in CAP_KEYS:
        if key not in mapping:
            continue
        value = mapping[key]
        whole = key == "tokens_per_day"
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or not 0 < value < 1e15:
            number = not isinstance(value, bool) and isinstance(value, int if whole else (int, float))
            raise refused(codes.CONFIG_BAD_VALUE if number else codes.CONFIG_WRONG_TYPE, where(key),
                          f"{prefix}{key}: expected a positive {'whole number' if whole else 'number'}")
        found[key] = int(value) if whole else float(value)
    return Caps(**found)


def _problem(key: str, value: Any) -> str | None:
    if not isinstance(value, str):
        return f"expected text, got {kind_in_words(value)}"
    problem = text_problem(value)
    if problem is not None:
        return problem
    if len(value) > 2048:
        return "is longer than 2048 characters"
    if key == "name" and (not NAME_RE.match(value) or value.endswith(".") or DEVICE_NAMES.match(value)):
        return ("must be 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit and not ending in "
                "`.`, and not a name Windows keeps for a device (con, nul, com1, …): it names the agent's page file")
    if key == "repo":
        return repo_problem(value)
    if key == "branch" and not BRANCH_RE.match(value):
        return "is not a plain branch name"
    if key == "workspace":
        return workspace_name_problem(value)
    if key == "github" and not GITHUB_RE.match(value):
        return "expected owner/name, as in github.com/owner/name"
    if key == "workflow" and not WORKFLOW_RE.match(value):
        return "expected a workflow file name in .github/workflows, such as gitmem.yml"
    if key == "stall_after":
        seconds = duration_seconds(value)
        if seconds is None:
            return "expected a duration like 90m, 8h or 2d"
        if not STALL_RANGE[0] <= seconds <= STALL_RANGE[1]:
            return "must be between 10m and 90d"
    return None


def repo_problem(repo: str) -> str | None:
    """Why `repo` cannot be fetched or read; None when it can."""
    if not repo.strip() or repo != repo.strip():
        return "must be a path or a URL without surrounding spaces"
    if repo.startswith("-"):
        return "must not start with `-` (git would read it as an option)"
    if SCP_RE.match(repo) and "://" not in repo:
        return None
    if "://" not in repo:
        return None if "::" not in repo else "is neither a path nor a URL git fetches over a network or file"
    parts = urlsplit(repo)
    if parts.scheme not in SCHEMES:
        return f"scheme {parts.scheme!r} is not fetched; use one of {', '.join(SCHEMES)}"
    if parts.password is not None or (parts.username and parts.scheme in ("https", "http")):
        return ("must not carry credentials: git's own configuration (a credential helper) or "
                "GITMEM_FLEET_TOKEN provides them, and never prints them")
    if parts.scheme != "file" and not parts.hostname:
        return "has no host"
    return None


def duration_seconds(value: str) -> int | None:
    found = DURATION_RE.match(value.strip())
    return int(found.group(1)) * UNITS[found.group(2)] if found else None


def github_path(repo: str) -> str | None:
    """`owner/name` when `repo` is a GitHub URL (https, ssh or scp-like), else None."""
    server = (os.environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
    host = urlsplit(server).hostname or "github.com"
    if repo.startswith(f"git@{host}:"):
        rest = repo.split(":", 1)[1]
    else:
        parts = urlsplit(repo)
        if parts.hostname != host or parts.scheme not in ("https", "ssh", "http"):
            return None
        rest = parts.path.lstrip("/")
    rest = rest.removesuffix("/").removesuffix(".git")
    pieces = rest.split("/")
    return rest if len(pieces) == 2 and all(pieces) else None
