"""The few shapes of markdown the CLIs' memory files share: a YAML frontmatter, `##` sections, bullet items and
paragraphs, each with the line it starts on (an origin names it)."""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from gitmem.config.nesting import TooDeep, parsing, within_depth, yaml_loader
from gitmem.interop.at_imports import at_imports
from gitmem.interop.code_blocks import line_texts

# A list item, bulleted (`-`, `*`, `+`) or numbered (`1.`, `2)`), its task box taken off with its marker.
_BULLET_RE = re.compile(r"^(?:[-*+]|(?P<number>[0-9]{1,9})[.)]) (?:\[[ xX]\] )?(.*)$")
_HEADING_RE = re.compile(r"^(#{1,6}) (.*)$")
_BREAK_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")     # `---`, `***`, `- - -`
_UNDERLINE_RE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")                # under a paragraph: a setext heading's
_BEGIN_RE = re.compile(r"^<!-- gitmem:begin (\S+) -->$")
_END_RE = re.compile(r"^<!-- gitmem:end (\S+) -->$")


@dataclass(frozen=True)
class Block:
    line: int          # 1-based, in the whole file
    text: str          # its lines joined with "\n", the bullet marker taken off
    heading: str       # the nearest `##` (or deeper) heading above it, "" before any
    bullet: bool


@dataclass(frozen=True)
class Frontmatter:
    meta: dict[str, Any]
    body: str
    body_line: int            # the line the body starts on
    # (line, what) when the frontmatter does not parse: then `meta` is empty and `body` is still the text below it
    problem: tuple[int, str] | None = None


def frontmatter(text: str) -> Frontmatter:
    """Split a `---` YAML frontmatter off `text` (Claude Code's topic files open with one). A `---` that no line
    closes opens none, as Claude Code reads it (its frontmatter pattern needs a closing `---`): the line is a
    thematic break, and the text all body."""
    lines = text.split("\n")
    close = frontmatter_close(lines)
    if close is None:
        return Frontmatter({}, text, 1)
    from ruamel.yaml.error import YAMLError

    body, body_line = "\n".join(lines[close + 1:]), close + 2
    try:
        with parsing():
            meta = within_depth(yaml_loader("safe").load("\n".join(lines[1:close])))
    except TooDeep as err:
        return Frontmatter({}, body, body_line, (2, f"has a frontmatter that cannot be read: {err}"))
    except YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = 2 + (mark.line if mark is not None else 0)
        return Frontmatter({}, body, body_line,
                           (line, f"has a frontmatter that is not YAML ({getattr(err, 'problem', err)})"))
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        return Frontmatter({}, body, body_line, (2, "has a frontmatter that is not a mapping of keys to values"))
    # YAML's escapes (`"\x1b"`) make characters the file's own bytes do not hold, which the source's reader
    # checked: a value the import carries (a name, a description) is held to the same plain text.
    from gitmem.memory.decoding import control_characters

    for value in _strings(meta):
        for _, what in control_characters(value.encode("utf-8", "surrogatepass")):
            return Frontmatter({}, body, body_line,
                               (2, f"has a frontmatter value holding {what}; memory is plain text"))
    return Frontmatter(meta, body, body_line)


def frontmatter_close(lines: list[str]) -> int | None:
    """The index of the line that closes the frontmatter `lines` open (`---` first, then `---` or `...`); None
    when they open none."""
    if lines[0].strip() != "---":
        return None
    return next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)


def shown_as_written(text: str) -> str:
    """`text` as a CLI that cuts no frontmatter shows it to its model (Codex, Gemini CLI), to find its notes and
    imports in: the lines between a `---` at the top and the next are text like the rest, and the closing line ends
    them as a blank line would, never as the underline of a setext heading. The author fenced those lines off as a
    block of their own (a frontmatter some other tool reads); read as a heading, their last line would be a title and
    no note, though the model reads it as any other line. Each line keeps its number."""
    lines = text.split("\n")
    close = frontmatter_close(lines)
    if close is not None:
        lines[close] = ""
    return "\n".join(lines)


def _strings(value: Any) -> Iterator[str]:
    """Every string of a loaded frontmatter, keys too (its depth is bounded by the loader)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def blocks(text: str, first_line: int = 1) -> Iterator[Block]:
    """List items, bulleted or numbered (with their indented continuation lines and sub-items), and paragraphs,
    outside code blocks and HTML comments; headings are not blocks, but each block knows its heading.

    Code and comments are what gitmem.interop.code_blocks says they are, the rule the `@path` imports are found by
    too: a fenced or indented block, or a comment, is no note and no part of one (a note lands as a line of text),
    and one opened inside a bullet's item ends with the item (a memory whose fence or comment was left open never
    hides the memories after it)."""
    return _blocks(line_texts(text.split("\n")), first_line)


def _blocks(raws: list[str | None], first_line: int) -> Iterator[Block]:
    """`blocks` of `raws`, each line's text (None: code or a comment, no line of a block)."""
    heading, start, is_bullet = "", 0, False
    current: list[str] = []

    def flush() -> Iterator[Block]:
        if current:
            yield Block(start, "\n".join(current).strip(), heading, is_bullet)

    for offset, raw in enumerate(raws):
        if raw is None:
            continue
        number, line = first_line + offset, raw.rstrip()
        if current and not is_bullet and _UNDERLINE_RE.match(line):
            heading, current = " ".join(current), []     # a setext heading's: the paragraph above is its title
            continue
        if _BREAK_RE.match(line):
            yield from flush()
            current = []                                  # a thematic break: no note, and the end of the one above
            continue
        heading_match = _HEADING_RE.match(line)
        bullet = _BULLET_RE.match(line)
        if bullet and bullet.group("number") not in (None, "1") and current and not is_bullet:
            bullet = None       # a number other than 1 opens no list inside a paragraph: `1984. A good year` goes on
        if heading_match or not line.strip() or bullet:
            yield from flush()
            current = []
        if heading_match:
            heading = heading_match.group(2).strip()
        elif bullet:
            current, start, is_bullet = [bullet.group(2)], number, True
        elif line.strip():
            if current and is_bullet and not raw.startswith((" ", "\t")):
                yield from flush()
                current = []
            if not current:
                start, is_bullet = number, False
            current.append(line.strip())
    yield from flush()


def section(text: str, title: str) -> tuple[str, int] | None:
    """The body of the `## title` section of `text` and the line it starts on; None when there is none."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == f"## {title}":
            end = next((j for j in range(index + 1, len(lines)) if re.match(r"^#{1,2} ", lines[j])), len(lines))
            return "\n".join(lines[index + 1:end]), index + 2
    return None


def note_blocks(text: str, *, section: str | None = None, first_line: int = 1) -> Iterator[Block]:
    """The `blocks` of `text`, a file an agent CLI reads as instructions, that are notes: outside gitmem's managed
    blocks (`<!-- gitmem:begin NAME -->` to its end) and the `## section` when one is named (another source reads
    it), and other than `@path` import lines. A begin line with no end after it (cut by hand, or planted) is only
    that line: it does not hide the notes that follow. What is code is judged on the text the imports are found in
    (`import_lines`), so a line is code to both or to neither."""
    lines = list(_kinds(text, section))
    texts = line_texts([line if kind != _OTHER else "" for line, kind in lines])
    return _blocks([_note_text(found, kind) for (_, kind), found in zip(lines, texts, strict=True)], first_line)


def _note_text(found: str | None, kind: str) -> str | None:
    """What a line gives the notes: None in code or a comment (`found`, its text, is None), else its text when it
    is a note's (`kind`), and blank when it is none (an import line, a managed block's, the named section's): blank
    ends the block before it. A line's text after a comment's `-->` is judged as a line of its own."""
    if found is None:
        return None
    return found if kind == _NOTE and not _IMPORT_RE.match(found.strip()) else ""


def import_lines(text: str, *, section: str | None = None, gemini_only: bool = False) -> list[tuple[int, str]]:
    """The `@path` imports of `text` outside gitmem's managed blocks (and the `## section`), found where Claude Code
    and Gemini CLI find them (gitmem.interop.at_imports: inside a sentence too, never in code, so a fence's
    `@decorator` is none): each line (1-based) and the path it names (`~/x.md`, `docs/x.md`, `./x.md`). A line
    that opens with an import is never a note itself (`note_blocks`). `gemini_only`: as Gemini CLI alone finds
    them, in a file only it loads."""
    kept = "\n".join(line if kind != _OTHER else "" for line, kind in _kinds(text, section))
    return at_imports(kept, gemini_only=gemini_only)


_NOTE, _IMPORT, _OTHER = "note", "import", "other"
# An import line, no note: imports alone, or as a list item (`- @~/.claude/my-instructions.md`, the memory docs'
# example). A line that goes on in words after an `@path` (`@babel/core is vendored`) is a note.
_IMPORT_RE = re.compile(r"^(?:[-*+] )?@\S+(?:\s+@\S+)*$")


def _kinds(text: str, section: str | None) -> Iterator[tuple[str, str]]:
    """Each line of `text` and what it is: a note's line, an `@path` import, or other (a managed block, the named
    section)."""
    lines = text.split("\n")
    last_end = {found.group(1): at for at, line in enumerate(lines) if (found := _END_RE.match(line.strip()))}
    inside, skipped = None, False
    for at, line in enumerate(lines):
        stripped = line.strip()
        begin = _BEGIN_RE.match(stripped)
        if inside is None and begin and last_end.get(begin.group(1), -1) > at:
            inside = begin.group(1)
        if stripped.startswith("## ") or stripped.startswith("# "):
            skipped = section is not None and stripped == f"## {section}"
        if inside is not None or begin is not None or skipped:
            yield line, _OTHER
        else:
            yield line, _IMPORT if _IMPORT_RE.match(stripped) else _NOTE
        if inside is not None and stripped == f"<!-- gitmem:end {inside} -->":
            inside = None
