"""The environment of a child process that coverage does not trace.

The suite runs under coverage with `patch = ["subprocess"]` (pyproject.toml): every Python child whose
environment holds these variables starts coverage at start-up (its .pth hook) and traces all it runs. That is
right for a child that runs gitmem as a user would; it is waste for a child that builds the suite's scaffolding
or re-runs code the suite already measures, where tracing costs 40% or more of the child's CPU.
"""
from __future__ import annotations

import os
from collections.abc import Mapping

COVERAGE_VARIABLES = ("COVERAGE_PROCESS_CONFIG", "COVERAGE_PROCESS_START")


def untraced_environ(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (the process's environment by default) without the variables that make a child start coverage."""
    source = os.environ if base is None else base
    return {name: value for name, value in source.items() if name not in COVERAGE_VARIABLES}
