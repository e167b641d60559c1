"""Merging the gitmem hooks into an existing .pre-commit-config.yaml, keeping every other byte."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from gitmem.config.nesting import TooDeep, parsing, within_depth, yaml_loader
from gitmem.confined import files
from gitmem.errors import GitmemError
from gitmem.scaffold.line_ends import with_own_line_ends

HOOK_IDS = ("gitmem-check", "gitmem-verify")


class InitError(GitmemError):
    """`init` cannot proceed safely; the message says what to do."""


def _yaml() -> Any:
    yaml = yaml_loader("rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-fold a user's long lines (regexes in `exclude:`)
    return yaml


def _load(yaml: Any, text: str, path: Path) -> Any:
    from ruamel.yaml.error import YAMLError

    try:
        with parsing():
            return within_depth(yaml.load(text))
    except TooDeep as err:
        raise InitError(f"{path}: {err}; fix it, then run `gitmem init` again") from None
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InitError(f"{where}: not valid YAML ({getattr(err, 'problem', None) or err}); "
                        f"fix it, then run `gitmem init` again") from None


def _plain(node: Any) -> Any:
    """Comment-free plain data, to compare what two YAML texts mean."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node


def merge_precommit(existing: Path, template: Path) -> bool:
    """Add the missing gitmem hooks to an existing pre-commit config; False when nothing was missing.

    The file is edited by inserting lines after the last entry of `repos:`, indented like its neighbours,
    so every other byte (comments, order, quoting, layout, CRLF) stays as the user wrote it. The result is
    parsed back with ruamel.yaml and must mean exactly "old config + the gitmem repo"; for layouts where a
    text insert cannot work (flow style, no `repos:`), a ruamel.yaml round-trip keeps comments and order.
    """
    raw = files.read_bytes(existing.parent, existing.name)
    if raw is None:
        raise InitError(f"{existing}: disappeared while gitmem init read it; run `gitmem init` again")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InitError(f"{existing}: not valid UTF-8; the gitmem hooks were not added") from None
    bom = "\ufeff" if raw.startswith(b"\xef\xbb\xbf") else ""
    original, text = text, text.replace("\r\n", "\n")
    yaml = _yaml()
    data = _load(yaml, text, existing)
    if data is not None and not isinstance(data, dict):
        raise InitError(f"{existing}: expected a mapping with `repos:`; run `pre-commit migrate-config` first")
    repos = (data or {}).get("repos")
    if repos is not None and not isinstance(repos, list):
        raise InitError(f"{existing}: `repos:` must be a list")
    present = {hook.get("id") for repo in (repos or []) if isinstance(repo, dict)
               for hook in (repo.get("hooks") or []) if isinstance(hook, dict)}
    missing = [hook_id for hook_id in HOOK_IDS if hook_id not in present]
    if not missing:
        return False
    ours = _yaml().load(template.read_text(encoding="utf-8"))["repos"][0]
    ours["hooks"] = [hook for hook in ours["hooks"] if hook["id"] in missing]
    expected = _plain(data or {})
    expected["repos"] = [*(expected.get("repos") or []), _plain(ours)]
    merged = _insert_text(text, data, ours)
    if merged is None or _plain(_load(_yaml(), merged, existing)) != expected:
        merged = _round_trip(data, ours)
    merged = with_own_line_ends(original, merged)       # each line keeps its own end, CRLF or LF
    files.write_bytes(existing.parent, existing.name, (bom + merged).encode("utf-8"))
    return True


def _insert_text(text: str, data: Any, ours: Any) -> str | None:
    """`text` with our repo entry inserted after the last block-style item of `repos:`; None if unsure."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if data is None or (isinstance(data, CommentedMap) and "repos" not in data):
        # Only comments, or no `repos:` yet: add the key at the end, keeping every existing line.
        return text + ("" if not text or text.endswith("\n") else "\n") + "\n".join(
            ["repos:", *_dump_item(ours, 0)]) + "\n"
    if not isinstance(data, CommentedMap) or not isinstance(data.get("repos"), CommentedSeq):
        return None
    repos = data["repos"]
    if not repos or repos.fa.flow_style():
        return None
    lines = text.split("\n")
    first_line = lines[repos.lc.item(0)[0]]
    dash = len(first_line) - len(first_line.lstrip(" "))
    if first_line[dash:dash + 2] != "- ":
        return None
    keys = list(data)
    position = keys.index("repos")
    end = data.lc.key(keys[position + 1])[0] if position + 1 < len(keys) else len(lines)
    # Blank lines and column-0 comments at the end of the region belong to what follows (or to the end of
    # the file), so the new entry goes above them.
    while end > 0 and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
        end -= 1
    block = _dump_item(ours, dash, _hooks_offset(repos, lines))
    return "\n".join([*lines[:end], *block, *lines[end:]])


def _hooks_offset(repos: Any, lines: list[str]) -> int:
    """How far the user indents `- id:` under `hooks:` (0 or 2, usually), read from their first hook list."""
    from ruamel.yaml.comments import CommentedSeq

    for repo in repos:
        hooks = repo.get("hooks") if isinstance(repo, dict) else None
        if isinstance(hooks, CommentedSeq) and hooks and not hooks.fa.flow_style():
            key_column: int = repo.lc.key("hooks")[1]
            item_line = lines[hooks.lc.item(0)[0]]
            return max(0, len(item_line) - len(item_line.lstrip(" ")) - key_column)
    return 2


def _dump_item(ours: Any, dash: int, hooks_offset: int = 2) -> list[str]:
    """Our repo entry as lines, its dash at column `dash`, hook items indented like the user's."""
    import io

    yaml = _yaml()
    yaml.indent(mapping=2, sequence=hooks_offset + 2, offset=hooks_offset)
    buffer = io.StringIO()
    yaml.dump(ours, buffer)
    body = buffer.getvalue().rstrip("\n").split("\n")
    return [" " * dash + ("- " if i == 0 else "  ") + line for i, line in enumerate(body)]


def _round_trip(data: Any, ours: Any) -> str:
    import io

    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if data is None:
        data = CommentedMap()
    repos = data.get("repos")
    if not repos:
        repos = CommentedSeq()
        repos.fa.set_block_style()
        data["repos"] = repos
    repos.append(ours)
    yaml = _yaml()
    yaml.indent(mapping=2, sequence=4, offset=2)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    return buffer.getvalue()
