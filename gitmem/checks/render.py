"""Output formats are functions from violations to text: `text`, `github` and `json`."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from gitmem.checks.violation import Violation
from gitmem.memory.lines import one_line


def render_text(violations: Sequence[Violation]) -> str:
    # A message may quote a multi-line field; text output keeps one line per violation.
    lines = []
    for v in violations:
        hint = f" (hint: {one_line(v.hint)})" if v.hint else ""
        level = "" if v.is_error else "warning: "
        lines.append(f"{v.path}:{v.line}: {v.code} {level}{one_line(v.message)} [{v.slug}]{hint}")
    return "".join(line + "\n" for line in lines)


def unreadable_note(found: Sequence[Violation]) -> str:
    """The one line a reader that shows bytes that are not UTF-8 as U+FFFD (`recall`, `report`) says of them, in
    the diagnostic form: the first line it could not read, and how many there were."""
    first = min(found)
    return (f"{first.path}:{first.line}: {first.code} {one_line(first.message)}: some entries could not be read "
            f"whole and show U+FFFD ({len(found)} line(s); `gitmem check --worktree` names each) [{first.slug}]")


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub Actions reads it (gitmem.views.actions writes the rest)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(violations: Sequence[Violation]) -> str:
    out = []
    for v in violations:
        kind = "error" if v.is_error else "warning"
        message = v.message + (f" (hint: {v.hint})" if v.hint else "")
        title = escape_property(f"{v.code} {v.slug}")
        out.append(f"::{kind} file={escape_property(v.path)},line={v.line},title={title}::{escape_data(message)}")
    return "".join(line + "\n" for line in out)


def as_data(violations: Sequence[Violation]) -> list[dict[str, object]]:
    """Violations as plain data: the JSON output, and the `violations` of `cycle --json` and `close --json`."""
    return [{"path": v.path, "line": v.line, "code": v.code, "slug": v.slug, "severity": v.severity,
             "message": v.message, "hint": v.hint} for v in violations]


def render_json(violations: Sequence[Violation]) -> str:
    import json

    return json.dumps(as_data(violations), indent=2, ensure_ascii=False) + "\n"


RENDERERS: dict[str, Callable[[Sequence[Violation]], str]] = {
    "text": render_text, "github": render_github, "json": render_json,
}
