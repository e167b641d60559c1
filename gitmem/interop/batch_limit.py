"""The whole batch or nothing: an import's one decision must leave DECISIONS Pending within its limits.

Pending is read whole into every cycle's context, so it has a share of the context and a number of decisions
(gitmem.checks.sizes, GM209). An import lists its whole batch in one decision; a batch that would put Pending over
either limit is refused as a whole before anything is written, as GM954 at the line the decision would take, so
`--dry-run` and `--json` say it too. Splitting the batch in silence would leave the human to find the rest.
"""
from __future__ import annotations

from gitmem import codes
from gitmem.checks.sizes import pending_chars, share_percent, size_limits
from gitmem.checks.violation import Violation
from gitmem.config import Config
from gitmem.errors import ExitCode, GitmemError
from gitmem.memory import decisions


class BatchOverPending(GitmemError):
    """The batch's decision would not fit Pending; `violations` holds the GM954. Nothing was written."""

    exit_code = ExitCode.VIOLATIONS


def over_pending(decisions_text: str, config: Config, facts: int) -> Violation | None:
    """GM954 when DECISIONS as the import would write it (`decisions_text`, its decision on top of Pending) has
    Pending over `limits.pending_max` decisions or over Pending's share of the context; None when it fits."""
    limits = size_limits(config)
    pending = decisions.parse(decisions_text).awaiting
    if not pending:
        return None
    path, line = config.path("decisions"), pending[0].line
    if len(pending) > limits.pending_count:
        return Violation.of(codes.IMPORT_BATCH_OVER_PENDING, path, line, "count", count=len(pending),
                            limit=limits.pending_count)
    size = pending_chars(pending)
    if size > limits.pending:
        return Violation.of(codes.IMPORT_BATCH_OVER_PENDING, path, line, "size", facts=facts, count=size,
                            limit=limits.pending, share=share_percent("pending"))
    return None
