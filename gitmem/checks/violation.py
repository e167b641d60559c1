"""Violations are data: complete when created, sorted by path, line and code."""
from __future__ import annotations

from dataclasses import dataclass

from gitmem.codes import rule
from gitmem.memory.text import Problem


@dataclass(frozen=True, order=True)
class Violation:
    path: str
    line: int
    code: str
    message: str
    hint: str = ""

    @property
    def slug(self) -> str:
        return rule(self.code).slug

    @property
    def severity(self) -> str:
        return rule(self.code).severity

    @property
    def is_error(self) -> bool:
        return self.severity == "error"


def from_problem(path: str, problem: Problem) -> Violation:
    return Violation(path, problem.line, problem.code, problem.message, problem.hint)
