"""The format problem a parser reports: a code, a line, its message and hint (the checks attach the path)."""
from __future__ import annotations

from gitmem.codes import Code
from gitmem.records import record


@record(frozen=True)
class Problem:
    """A format problem found while parsing; the checks attach the file path."""

    code: str
    line: int
    message: str
    hint: str = ""
    since: int = 1          # the rules generation of the variant that found it (gitmem.codes.Code.generation)

    @classmethod
    def of(cls, code: Code, line: int, variant: str = "", /, **values: object) -> Problem:
        message, hint = code.render(variant, **values)
        return cls(code.code, line, message, hint, code.generation(variant))
