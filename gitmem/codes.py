"""Every GM code in one place: a stable code, a kebab-case slug, and what it means. Codes are never reused."""
from __future__ import annotations

import re
from dataclasses import dataclass

CODE_RE = re.compile(r"^GM[1-59]\d\d$")
SLUG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Rule:
    code: str
    slug: str
    summary: str
    severity: str = "error"


RULES: tuple[Rule, ...] = (
    Rule("GM101", "now-block-too-long", "a NOW block body has more than `limits.now_block_lines` non-blank lines"),
    Rule("GM102", "now-heading-malformed", "a NOW heading is not `<timestamp> · cycle N` or `<timestamp> · plan for <date>`"),
    Rule("GM103", "now-not-newest-first", "NOW blocks are not newest first"),
    Rule("GM201", "decisions-sections", "the `## Pending` or `## Resolved` section is missing or out of order"),
    Rule("GM202", "decision-duplicate-id", "two decisions share an ID"),
    Rule("GM203", "decision-pending-incomplete", "a Pending decision lacks `Asked` or `Recommendation`"),
    Rule("GM204", "decision-resolved-incomplete", "a Resolved decision lacks `Answer` or `Answered`"),
    Rule("GM205", "decision-resolved-rewritten", "a Resolved decision was edited, removed, or moved back to Pending"),
    Rule("GM206", "decision-id-vanished", "a decision ID that existed disappeared"),
    Rule("GM207", "decision-resolved-by-agent", "a decision was resolved by the agent identity; only humans answer"),
    Rule("GM208", "decision-heading-malformed", "a decision heading is not `### D-0001 · title`"),
    Rule("GM301", "log-not-append-only", "LOG is not the previous LOG with bytes appended (or it was deleted or renamed)"),
    Rule("GM302", "log-time-backwards", "LOG timestamps go backwards"),
    Rule("GM303", "log-cycle-not-increasing", "LOG cycle numbers do not strictly increase"),
    Rule("GM304", "log-no-build-without-reason", "a `no-build` entry has no `Result:` giving the reason (Rule 0)"),
    Rule("GM305", "log-cycle-incomplete", "a cycle entry lacks `Task` or `Result`"),
    Rule("GM306", "log-heading-malformed", "a LOG heading is not `<timestamp> · cycle N · <outcome>` or `<timestamp> · close`"),
    Rule("GM401", "lesson-duplicate-id", "two lessons share an ID"),
    Rule("GM402", "lesson-incomplete", "a lesson lacks `Happened`, `Why` or `Change`, or Happened is not `<date> (cycle N) — …`"),
    Rule("GM403", "lesson-confirmation-invalid", "a confirmation's cycle is not later than the lesson's, or repeats a counted cycle"),
    Rule("GM404", "lesson-status-invalid", "a Status that is not `open`, `promoted R-NN` or `retired — <reason>`"),
    Rule("GM405", "lesson-vanished", "a lesson disappeared; lessons are history"),
    Rule("GM406", "lesson-heading-malformed", "a lesson heading is not `## L-0001 · title`"),
    Rule("GM501", "rule-not-one-line", "a proven rule is not exactly one line"),
    Rule("GM502", "rule-id-duplicate", "a rule ID is duplicated or reused"),
    Rule("GM503", "rule-lesson-missing", "a rule's provenance names a lesson that does not exist"),
    Rule("GM504", "rules-over-limit", "RULES is over `limits.rules_max_lines`, or has more than `limits.proven_rules_max` proven rules"),
    Rule("GM505", "rule-vanished", "a proven rule vanished without moving to `## Retired`, or a retired rule was deleted"),
    Rule("GM506", "rule-line-malformed", "a rule line is not `- R-NN · rule (provenance)`"),
    Rule("GM507", "rules-section-order", "a free-text section follows the rule sections"),
    Rule("GM508", "rules-proven-missing", "RULES has no `## Proven rules` section"),
    Rule("GM901", "conflict-markers", "a memory file contains merge conflict markers"),
    Rule("GM902", "not-utf8", "a memory file is not valid UTF-8"),
    Rule("GM903", "secret-like-token", "a memory file contains something that looks like a secret"),
    Rule("GM904", "memory-file-missing", "a memory file is missing"),
    Rule("GM905", "non-canonical-encoding", "CRLF line endings or a byte order mark (accepted, with a warning)", "warning"),
    Rule("GM906", "history-rewritten", "the verified range is not a descendant: history was rewritten"),
    Rule("GM907", "title-missing", "a memory file does not start with its `# TITLE` line"),
)

BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}


def rule(code: str) -> Rule:
    return BY_CODE[code]
