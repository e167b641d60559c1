"""Violations are data: complete when created, sorted by path, line and code."""
from __future__ import annotations

from dataclasses import field

from gitmem.codes import Code, lookup
from gitmem.errors import RunFailure
from gitmem.memory.text import Problem
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


def from_problem(path: str, problem: Problem) -> Violation:
    return Violation(path, problem.line, problem.code, problem.message, problem.hint, problem.since)


def failure_violations(err: RunFailure) -> list[Violation]:
    """A failed cycle or close as violations: its own GM7xx/GM8xx code first, then what lies behind it."""
    return [Violation.of(err.code, err.where, 1, message=str(err)), *err.details]
