"""Protected paths: files an agent's cycle never changes on its own, because they steer gitmem, git, CI or the
tools on the human's machine (what they run, which servers they load, what is ignored).

A pattern is a path relative to the repository root. A leading `/` anchors it at the root; without one, a
pattern naming one file or directory (`.gitignore`, `.claude/`) matches it at any depth. A trailing `/`
covers everything under the directory; `*`, `?` and `[...]` are globs. `gitmem.yaml` may add patterns
(`agent.protected_paths`), never remove the defaults. Paths are compared the way a case-insensitive or
Unicode-ignoring file system (macOS, Windows) would see them, so `.GitHub/` and `.github\\u200c/` are `.github/`.

The gitmem-managed blocks in CLAUDE.md, AGENTS.md and GEMINI.md are protected too, but only the blocks: the text around
them is the user's and the agent may edit it. Pure: no git, no files.

The agent's tools (`gitmem.agents.tools`) say when a write lands on one; the cycle's guard
(`gitmem.cycle.agent_guard`), above them, moves such a change to a branch. So the rule lives here, below both.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from gitmem.config import CONFIG_NAME
from gitmem.secrets import ALLOWLIST_FILE

CONFIG = f"/{CONFIG_NAME}"     # the pattern of gitmem's config: `is_config` and the defaults both match with it
DEFAULTS: tuple[str, ...] = (
    # gitmem itself: its config, the prompts it gives the agent, the secrets allowlist, the launcher every agent
    # CLI's hooks and MCP entries run with the human's rights (gitmem.sessions.launcher)
    CONFIG, "/prompts/", f"/{ALLOWLIST_FILE}", "/.gitmem/",
    # what git ignores, filters and fetches (Git LFS reads `.lfsconfig` on every clone, fetch and push)
    ".gitignore", ".gitattributes", "/.gitmodules", "/.lfsconfig",
    # hooks and hook managers
    "/.pre-commit-config.yaml", "/.pre-commit-config.yml", "/.githooks/", "/.git-hooks/", ".husky/",
    "/lefthook.yml", "/lefthook.yaml", "/.lefthook.yml", "/.lefthook.yaml", "/lefthook-local.yml",
    "/lefthook-local.yaml", "/.lefthook-local.yml", "/.lefthook-local.yaml", "/.lefthook/", "/.overcommit.yml",
    "/.simple-git-hooks.json", "/.simple-git-hooks.js", "/.simple-git-hooks.cjs", "/.simple-git-hooks.mjs",
    "/simple-git-hooks.json", "/simple-git-hooks.js", "/simple-git-hooks.cjs", "/simple-git-hooks.mjs",
    # CI
    "/.github/", "/.gitlab-ci.yml", "/.gitlab/", "/.circleci/", "/.travis.yml", "/azure-pipelines.yml",
    "/Jenkinsfile", "/.buildkite/", "/bitbucket-pipelines.yml", "/.drone.yml", "/.woodpecker/", "/.woodpecker.yml",
    # agent tools, editors and dev environments that run commands or load servers
    ".claude/", "/.mcp.json", ".cursor/", ".codex/", ".gemini/", ".vscode/", ".devcontainer/",
    "/.devcontainer.json", ".envrc", ".zed/", ".continue/", ".roo/", ".kiro/", ".amazonq/", ".windsurf/",
    "/.aider.conf.yml", "/.aider.conf.yaml", ".idea/",
    # more agent CLIs whose project config adds MCP servers, hooks or plugins the next session runs
    "/opencode.json", "/opencode.jsonc", ".opencode/", "/crush.json", "/.crush.json", ".qwen/", ".kilocode/",
    ".clinerules/", ".junie/", ".augment/", ".trae/", ".amp/",
    # editors and shells that run what a project file says when the folder is opened or entered
    "*.code-workspace", ".fleet/", ".helix/", "/.nvim.lua", "/.nvimrc", "/.exrc", "/.lazy.lua", "/.dir-locals.el",
    "/.dir-locals-2.el", "/mise.toml", "/.mise.toml", "/mise.*.toml", "/.mise.*.toml", "/.mise/", "/mise/",
    "/.config/mise.toml", "/.config/mise/",
)
MANAGED_FILES = ("claude.md", "agents.md", "gemini.md")   # compared folded: the files whose gitmem blocks are kept
# A block's markers may carry its name (`<!-- gitmem:begin protocol -->` ... `<!-- gitmem:end protocol -->`, as
# `gitmem init --agent` writes them); an unclosed block runs to the end of the text.
BLOCK_RE = re.compile(r"<!--[ \t]*gitmem:begin\b[^\n]*?-->.*?(?:<!--[ \t]*gitmem:end\b[^\n]*?-->|\Z)",
                      re.IGNORECASE | re.DOTALL)
# Code points macOS's file system ignores, and what Windows drops from a name's end.
_IGNORABLE = dict.fromkeys([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
_SHORT_NAME = re.compile(r"^([^~.]{1,6})~[0-9]+(?:\.[^.]{0,3})?$")


def fold_component(component: str) -> str:
    """One path component as a case-insensitive, Unicode-ignoring file system compares it."""
    name = unicodedata.normalize("NFC", component).translate(_IGNORABLE).casefold()
    name = name.split(":", 1)[0]                  # an NTFS stream (`.gitignore::$DATA`) is the file itself
    return name.rstrip(" .") or name


@dataclass(frozen=True)
class ProtectedPattern:
    parts: tuple[str, ...]     # folded components, globs allowed
    anchored: bool

    @classmethod
    def parse(cls, pattern: str) -> ProtectedPattern | None:
        text = pattern.strip().replace("\\", "/")
        parts = tuple(fold_component(part) for part in text.strip("/").split("/") if part and part != ".")
        if not parts:
            return None
        return cls(parts, text.startswith("/") or len(parts) > 1)

    def matches(self, path: tuple[str, ...]) -> bool:
        """The path is the pattern's file or directory, or lies under it (a file where a directory was, too)."""
        size = len(self.parts)
        starts = [0] if self.anchored else range(len(path) - size + 1)
        return any(len(path) >= start + size and all(_same(name, rule) for name, rule in
                                                     zip(path[start:start + size], self.parts, strict=True))
                   for start in starts)


def _same(name: str, rule: str) -> bool:
    if fnmatchcase(name, rule):
        return True
    short = _SHORT_NAME.match(name)           # a Windows 8.3 name (`GITHUB~1`) for a longer one
    return short is not None and rule.lstrip(".").replace(".", "").startswith(short.group(1)) and "*" not in rule


# = ProtectedPattern.parse(CONFIG)
_CONFIG_PATTERN = ProtectedPattern(parts=(fold_component(CONFIG_NAME),), anchored=True)


def _folded(path: str) -> tuple[str, ...]:
    return tuple(fold_component(part) for part in path.replace("\\", "/").split("/") if part and part != ".")


def is_config(path: str) -> bool:
    """Whether the repo-relative `path` is gitmem.yaml as some file system sees it (`GITMEM.yaml`, `gitmem.yaml.`,
    `GITMEM~1.YAM`), or lies under it. The one decision: the cycle protects that path (CONFIG is in DEFAULTS),
    and the agent's file tools refuse to write it (gitmem.agents.tools)."""
    return _CONFIG_PATTERN.matches(_folded(path))


class Protection:
    """The protected paths of one cycle: the defaults, the config's additions and the links found at start."""

    def __init__(self, extra: Iterable[str] = (), *, shadowed: Iterable[str] = ()) -> None:
        self.extra = tuple(extra)
        self.patterns = tuple(dict.fromkeys([*DEFAULTS, *self.extra]))
        self.rules = tuple(rule for p in self.patterns if (rule := ProtectedPattern.parse(p)) is not None)
        # Files the cycle writes under their own name (memory): every other spelling that a case-insensitive or
        # Unicode-ignoring file system takes for one of them (`log.md`, `RULES.md\u200c`) is protected, or a
        # clone on macOS or Windows would check the agent's text out in its place.
        self.shadowed = tuple(path.strip("/") for path in shadowed)
        self.shadows = tuple((path, rule) for path in self.shadowed
                             if (rule := ProtectedPattern.parse(f"/{path}")) is not None)

    def covers(self, path: str) -> bool:
        parts = _folded(path)
        if any(rule.matches(parts) for rule in self.rules):
            return True
        # The exact path, or a path under it (a directory planted where the file belongs), is not another
        # spelling: the memory checks refuse a memory file that is not a regular file.
        named = [part for part in path.replace("\\", "/").split("/") if part and part != "."]
        return any(rule.matches(parts) and "/".join(named[:exact.count("/") + 1]) != exact
                   for exact, rule in self.shadows)

    def with_paths(self, paths: Iterable[str]) -> Protection:
        """These exact paths protected too (where a protected symlink points)."""
        return Protection([*self.extra, *(f"/{p.strip('/')}" for p in paths)], shadowed=self.shadowed)


def names_git_dir(path: str) -> bool:
    """Whether a component of the repo-relative `path` is `.git` as some file system sees it (`.GIT`, `.git.`,
    `.git `, `GIT~1`, `.gi\u200ct`, `.git::$INDEX_ALLOCATION`): git refuses to store such a path, or to check it
    out where that file system is, since there it would be the repository itself."""
    return any(_same(fold_component(part), ".git") for part in path.replace("\\", "/").split("/") if part)


def has_managed_blocks(path: str) -> bool:
    return fold_component(path.rsplit("/", 1)[-1]) in MANAGED_FILES


def managed_blocks(text: str) -> list[str]:
    """The gitmem-managed blocks of a text, markers included; an unclosed one runs to the end."""
    return [match.group(0) for match in BLOCK_RE.finditer(text)]


def keep_blocks(before: str, after: str | None) -> str | None:
    """`after` with its gitmem blocks exactly as in `before`: the agent's text around them stays, a block it
    changed, removed or forged does not. None when `after` needs no change."""
    old = managed_blocks(before)
    if after is None:
        return "\n\n".join(old) + "\n" if old else None
    new = managed_blocks(after)
    if new == old:
        return None
    pieces = BLOCK_RE.split(after)
    text = pieces[0]
    for index, piece in enumerate(pieces[1:]):
        if index < len(old):
            text += old[index] + piece
        else:                                   # a forged block goes, with the line end it stood on
            text += piece[1:] if piece.startswith("\n") else piece
    missing = old[len(pieces) - 1:]
    if missing:
        text = text.rstrip("\n") + ("\n\n" if text.strip() else "") + "\n\n".join(missing) + "\n"
    return text
