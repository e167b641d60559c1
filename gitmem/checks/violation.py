"""Violations are data: complete when created, sorted by path, line and code."""
from __future__ import annotations

from dataclasses import field

from gitmem.codes import Code, lookup
from gitmem.errors import RunFailure
from gitmem.memory.problems import Problem
from gitmem.records import record


@record(frozen=True, order=True)
class Violation:
    """One problem: `path:line: code message`, complete when made (see the module)."""
    path: str
    line: int
    code: str
    message: str
    hint: str = ""
    # The rules version (gitmem.codes.RULES_VERSION) of the variant or check that found it, when later than its code's.
    since: int = field(default=1, compare=False)

    @classmethod
    def of(cls, code: Code, path: str, line: int, variant: str = "", /, **values: object) -> Violation:
        """A violation of `code` at `path:line`, its message filled from the codes table."""
        message, hint = code.render(variant, **values)
        return cls(path, line, code.code, message, hint, code.generation(variant))

    @property
    def generation(self) -> int:
        """The rules generation that added what this violation reports (`verify` judges old commits without it)."""
        return max(self.since, lookup(self.code).since)

    @property
    def slug(self) -> str:
        return lookup(self.code).slug

    @property
    def severity(self) -> str:
        return lookup(self.code).severity

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def from_problem(path: str, problem: Problem, text: str | None = None) -> Violation:
    """`problem` in `path` as a violation. Given the file's `text`, a problem about the whole file (GM508: no
    `## Proven rules`), which a parser places after its last line, points at that last line: `check`, `status`
    and `init` then name the same line, and an editor can open it."""
    line = problem.line if text is None else min(problem.line, last_line(text))
    return Violation(path, line, problem.code, problem.message, problem.hint, problem.since)


def last_line(text: str) -> int:
    """The number of the last line of `text` (1 for an empty file): a final newline ends a line, it starts none."""
    return max(text.count("\n") + (0 if text.endswith("\n") else 1), 1)


def failure_violations(err: RunFailure) -> list[Violation]:
    """A failed cycle or close as violations: its own GM7xx/GM8xx code first, then what lies behind it."""
    return [Violation.of(err.code, err.where, err.line, message=str(err)), *err.details]
