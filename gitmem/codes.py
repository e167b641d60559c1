"""Every GM code in one table: a stable code, a kebab-case slug, what it means, and its message templates.

Families: GM1xx NOW, GM2xx DECISIONS, GM3xx LOG, GM4xx LESSONS, GM5xx RULES, GM6xx ROADMAP and the
`cycle.always_load` files, GM7xx the cycle runner, GM8xx the daily close, GM9xx the whole repository, within it
GM950-GM969 `gitmem import` and `gitmem export` (a source file another agent CLI wrote, read but never judged as
memory: these are refusals of the import, not checks of a commit). A code is never reused once retired.
Nothing outside this module writes a code: call sites name a `Code` and fill its template (`Violation.of`,
`Problem.of`).

Dependency-free on purpose: `gitmem.memory` and `gitmem.checks` import it on the pre-commit path.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import field
from functools import cache

from gitmem.records import record

# The rules generation of this release. Codes and variants added in a release carry its generation
# (`since`): `verify` holds a commit to them only when the commit was made under them (gitmem.checks.generation),
# so a history that was valid before an upgrade stays valid. Bump it with every release that adds rules.
RULES_VERSION = 6



# The shapes of a code and of its slug, compiled on first use: the table is held to them by its tests, and
# nothing on the pre-commit path reads them.
@cache
def code_re() -> re.Pattern[str]:
    return re.compile(r"^GM[1-9][0-9][0-9]$")


@cache
def slug_re() -> re.Pattern[str]:
    return re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@record(frozen=True)
class Message:
    """A message and its hint, with `{name}` fields that the caller fills."""

    text: str
    hint: str = ""
    since: int = 1                                 # the rules generation that added this variant


@record(frozen=True)
class Code:
    """A GM code: its number, slug, summary, messages by variant, severity and the rules generation it starts at."""
    code: str
    slug: str
    summary: str                                   # what the code means, for the docs table
    messages: Mapping[str, Message] = field(default_factory=dict)   # variant -> message; "" is the default
    severity: str = "error"
    since: int = 1                                 # the rules generation that added this code

    def generation(self, variant: str = "") -> int:
        """The rules generation a violation of `variant` belongs to: the code's, or its variant's if later."""
        message = self.messages.get(variant)
        return max(self.since, message.since if message is not None else 1)

    def render(self, variant: str = "", /, **values: object) -> tuple[str, str]:
        """(message, hint) of `variant`, filled with `values`."""
        message = self.messages[variant]
        return message.text.format(**values), message.hint.format(**values)


def _code(code: str, slug: str, summary: str, text: str = "", hint: str = "", *, severity: str = "error",
          since: int = 1, **variants: Message) -> Code:
    messages = {"": Message(text, hint)} if text else {}
    return Code(code, slug, summary, {**messages, **variants}, severity, since)


_HEADING_MSG = "malformed {what} heading `{marker} {title}`"
# Rules 3: a heading that would parse if its digits were 0-9. Python's `\\d` and int() read `٣` as 3; the
# grammars count ASCII digits only, so no reader takes such a heading for a number.
_DIGITS_HINT = "write numbers and times with the ASCII digits 0-9"
_HEADING_DIGITS = Message("{what} heading `{marker} {title}` writes a number with digits other than 0-9",
                          _DIGITS_HINT, since=3)
# The same for the other lines whose grammar counts numbers: a field or a rule line that reads only with its
# digits folded to 0-9 was valid under rules 2.
_FIELD_DIGITS = Message("{id}: `{field}` writes a number with digits other than 0-9", _DIGITS_HINT, since=3)
_OF_HARD = "the limit is {limit}, {share} of the context's hard limit (cycle.max_context_tokens)"

# -- GM1xx NOW ---------------------------------------------------------------------------------------------
NOW_BLOCK_TOO_LONG = _code(
    "GM101", "now-block-too-long", "a NOW block body has more than `limits.now_block_lines` non-blank lines",
    "NOW block has {count} non-blank lines; the limit is {limit}",
    "keep Did / Human / Next short; details belong in LOG")
NOW_HEADING_MALFORMED = _code(
    "GM102", "now-heading-malformed",
    "a NOW heading is not `<timestamp> · cycle N` or `<timestamp> · plan for <date>`", _HEADING_MSG,
    "use `## YYYY-MM-DD HH:MM TZ · cycle N` or `## YYYY-MM-DD HH:MM TZ · plan for YYYY-MM-DD`",
    digits=_HEADING_DIGITS)
NOW_NOT_NEWEST_FIRST = _code(
    "GM103", "now-not-newest-first",
    "NOW blocks are not newest first by time (rules 1-3; from rules 4 by position, and GM310 reports the times)",
    "block {older} is newer than the block above it ({newer}); NOW is newest first", "put new blocks on top")
NOW_BLOCK_TOO_BIG = _code(
    "GM104", "now-block-too-big", "a new NOW block is over its share of the cycle's context (long lines)",
    "NOW block is {count} characters (its longest line {longest}); " + _OF_HARD,
    "keep Did / Human / Next to a few short lines; details belong in LOG", since=2)
_ONE_RULE = ("a NOW block belongs to a cycle LOG has, or to the next one ({next}); `gitmem now add` and `gitmem log "
             "add` number both alike: write that cycle's LOG entry, or edit the block instead of adding one")
NOW_CYCLE_NOT_IN_LOG = _code(
    "GM105", "now-cycle-not-in-log", "a new NOW block names a cycle that LOG neither has nor opens next",
    "the NOW block for cycle {cycle} has no LOG entry, and the next cycle is {next}", _ONE_RULE,
    ahead=Message("the NOW block for cycle {cycle} is ahead of LOG, whose last cycle is {last}", _ONE_RULE,
                  since=4), since=4)

# -- GM2xx DECISIONS ---------------------------------------------------------------------------------------
DECISIONS_SECTIONS = _code(
    "GM201", "decisions-sections", "the `## Pending` or `## Resolved` section is missing or out of order",
    "sections must be `## {pending}` then `## {resolved}`, found {found}")
DECISION_DUPLICATE_ID = _code(
    "GM202", "decision-duplicate-id", "two decisions share an ID",
    "{id} is used more than once", "the next free ID is {next_id}")
DECISION_PENDING_INCOMPLETE = _code(
    "GM203", "decision-pending-incomplete", "a Pending decision lacks `Asked` or `Recommendation`",
    "{id} lacks {missing}", "`- Asked: YYYY-MM-DD HH:MM TZ (cycle N)` and `- Recommendation: …`",
    digits=_FIELD_DIGITS)
DECISION_RESOLVED_INCOMPLETE = _code(
    "GM204", "decision-resolved-incomplete", "a Resolved decision lacks `Answer` or `Answered`",
    "{id} lacks {missing}", "`- Answer: …` and `- Answered: YYYY-MM-DD HH:MM TZ by Name <email>`",
    digits=_FIELD_DIGITS)
DECISION_RESOLVED_REWRITTEN = _code(
    "GM205", "decision-resolved-rewritten", "a Resolved decision was edited, removed, or moved back to Pending",
    removed=Message("resolved decision {id} was removed", "resolved decisions are history; restore it"),
    reopened=Message("{id} was moved back to Pending"),
    edited=Message("resolved decision {id} was edited", "ask a new decision instead of rewriting an answered one"),
    # Rules 4: an answer written in place under Pending is as final as one under Resolved.
    answer_edited=Message("answered decision {id} was edited", "its answer stands as the human wrote it; moving it "
                          "under Resolved is allowed only byte for byte; ask a new decision to change it", since=4),
    unanswered=Message("the answer to {id} was removed", "an answer is history; ask a new decision instead", since=4),
    answer_removed=Message("answered decision {id} was removed", "answers are history; restore it", since=4))
DECISION_ID_VANISHED = _code(
    "GM206", "decision-id-vanished", "a decision ID that existed disappeared",
    "decision {id} disappeared; IDs are never removed")
DECISION_RESOLVED_BY_AGENT = _code(
    "GM207", "decision-resolved-by-agent", "a decision was resolved by the agent identity; only humans answer",
    "{id} was resolved by the agent identity <{email}>",
    "only a human answers: `gitmem decision answer` as yourself, in a PR",
    normalised=Message("{id} was resolved by the agent identity <{email}>, written with characters git trims",
                       "only a human answers: `gitmem decision answer` as yourself, in a PR", since=3),
    in_place=Message("{id} was answered in place by the agent identity <{email}>",
                     "only a human answers: `gitmem decision answer` as yourself, in a PR", since=4))
DECISION_HEADING_MALFORMED = _code(
    "GM208", "decision-heading-malformed", "a decision heading is not `### D-0001 · title`", _HEADING_MSG,
    "use `### D-0001 · title`", digits=_HEADING_DIGITS)
PENDING_OVER_LIMIT = _code(
    "GM209", "pending-over-limit",
    "DECISIONS Pending has more than `limits.pending_max` decisions, or is over its share of the cycle's context",
    count=Message("{count} Pending decisions; the limit is {limit} (limits.pending_max)",
                  "wait for answers before asking more, or merge related questions into one"),
    size=Message("Pending is {count} characters; " + _OF_HARD,
                 "keep Context and Options short; details belong in LOG or in a file the decision names"), since=2)
DECISION_ANSWER_UNSIGNED = _code(
    "GM210", "decision-answer-unsigned",
    "with `trust.signed_answers`, a decision was answered in a commit not signed by a key in `trust.signing_keys`",
    "{id} was answered in a commit that is not signed by a key in trust.signing_keys ({why})",
    "answer in a commit signed with your SSH key (`git commit -S` with gpg.format = ssh) whose public key is "
    "listed in trust.signing_keys", since=3)
DECISION_ANSWERED_AHEAD = _code(
    "GM211", "decision-answered-ahead",
    "a new answer's `Answered` time is more than 10 minutes after the clock (`check`) or its commit (`verify`)",
    "{id} is answered at {answered}, {ahead} after the clock ({moment})",
    "write the time the answer was given, in its own zone (`gitmem decision answer` does it); a local time "
    "labelled UTC is off by hours", since=3,
    commit=Message("{id} is answered at {answered}, {ahead} after its commit's committer date ({moment})",
                   "write the time the answer was given, in its own zone (`gitmem decision answer` does it); a "
                   "local time labelled UTC is off by hours", since=3))
DECISION_ANSWER_INCOMPLETE = _code(
    "GM212", "decision-answer-incomplete",
    "a Pending decision holds half an answer: `Answer` without a valid `Answered` line, or the reverse",
    "{id} holds an answer that is not complete: it lacks {missing}",
    "an answer in place is `- Answer: …` and `- Answered: YYYY-MM-DD HH:MM TZ by Name <email>` at the end of the "
    "decision (`gitmem decision answer` writes both)", since=4)
DECISION_ANSWERED_BEFORE_ASKED = _code(
    "GM213", "decision-answered-before-asked",
    "a new answer's `Answered` time is more than `CLOCK_SKEW` (10 minutes) before its `Asked` time: reported, not "
    "refused, since either clock may be the wrong one",
    "{id} is answered at {answered}, {behind} before it was asked ({asked}): one of the two clocks was off",
    "nothing to fix here, the answer stands; set the clock that is off right (NTP), and let the tools date what "
    "you write", severity="warning", since=6)
# A decision's title is one line the human reads in every list of Pending (status, pending, the fleet's inbox):
# a question, not its context, which has `- Context:` (docs/format.md states the bound).
DECISION_TITLE_MAX = 200
DECISION_TITLE_TOO_LONG = _code(
    "GM214", "decision-title-too-long",
    f"a decision new in this change has a title longer than {DECISION_TITLE_MAX} characters",
    "{id}'s title is {count} characters; the limit is {limit}",
    "ask the question in the title and put the rest in `- Context:` (`gitmem decision ask --context …`)", since=6)

# -- GM3xx LOG ---------------------------------------------------------------------------------------------
LOG_NOT_APPEND_ONLY = _code(
    "GM301", "log-not-append-only",
    "LOG is not the previous LOG with bytes appended (or it was deleted or renamed)",
    deleted=Message("LOG was deleted or renamed; LOG is append-only history",
                    "restore it: `git checkout HEAD -- {path}`"),
    rewritten=Message("LOG was rewritten at line {line}; only appending is allowed",
                      "restore the old lines and add a new entry at the end instead"),
    appended_to_entry=Message("line {line} is appended to the entry above it, which changes history",
                              "each addition starts with its own `## <timestamp> · …` heading (`gitmem log add`)"),
    in_open_fence=Message("line {line} is inside a code fence that the LOG above leaves open, so it would "
                          "be part of the entry above",
                          "close that fence first: a line of three backticks before the new entry "
                          "(`gitmem log add` does it)", since=2),
    dropped_by_merge=Message("the merge drops the LOG entry `{heading}` that parent {parent} added",
                             "a merge keeps every parent's entries: append it after the first parent's entries",
                             since=2))
LOG_TIME_BACKWARDS = _code(
    "GM302", "log-time-backwards",
    "LOG timestamps go backwards (rules 1-3; from rules 4 LOG is ordered by cycle number, and GM310 reports it)",
    "{when} is earlier than the entry before it ({before})",
    "timestamps come from the clock: `gitmem log add` writes them")
LOG_CYCLE_NOT_INCREASING = _code(
    "GM303", "log-cycle-not-increasing", "LOG cycle numbers do not strictly increase",
    "cycle {cycle} does not follow cycle {last}", "the next cycle is {next}")
LOG_NO_BUILD_WITHOUT_REASON = _code(
    "GM304", "log-no-build-without-reason", "a `no-build` entry has no `Result:` giving the reason (Rule 0)",
    "a no-build cycle must say why in `- Result:` (Rule 0)")
LOG_CYCLE_INCOMPLETE = _code(
    "GM305", "log-cycle-incomplete", "a cycle entry lacks `Task` or `Result`",
    "cycle {cycle} has no {missing}", "every cycle entry has `- Task:` and `- Result:`")
LOG_HEADING_MALFORMED = _code(
    "GM306", "log-heading-malformed",
    "a LOG heading is not `<timestamp> · cycle N · <outcome>` or `<timestamp> · close`", _HEADING_MSG,
    "use `## YYYY-MM-DD HH:MM TZ · cycle N · built|published|no-build` or `## … · close`", digits=_HEADING_DIGITS,
    # Memory as it stands (gitmem.checks.standing): the entry is already history, so the fix is an amendment.
    standing=Message("{kind} LOG heading `## {title}`: no reader finds this entry, and LOG is append-only",
                     "supersede it with an amendment: `gitmem log amend --line {line} --task … --outcome … "
                     "--result …` (docs/format.md, Amending LOG)", since=4))
LOG_ENTRY_TOO_BIG = _code(
    "GM307", "log-entry-too-big", "a new LOG entry is over its share of the cycle's context (the next cycle reads it)",
    "LOG entry is {count} characters; " + _OF_HARD,
    "keep Evidence to the commands and numbers that prove the result; put long output in a file and name it", since=2)

_UNORDERED = ("parent {parent} logged {theirs} and the first parent logged {ours} since they split; after the "
              "first parent's entries, the other's break the order of times and cycle numbers")
LOG_MERGE_UNORDERED = _code(
    "GM308", "log-merge-unordered",
    "a merge joins LOG entries from two parents in an order that breaks the LOG rules",
    _UNORDERED,
    "merge with `gitmem merge BRANCH` instead: it gives the other side's entries cycle numbers after {last} and "
    "a time after ours where theirs would go back (or rebase {parent} onto the first parent and renumber by hand)",
    other_way=Message(_UNORDERED, "merge the other way round: check out {parent} and merge the first parent into "
                                  "it, so that the earlier entries come first"), since=2)

_AHEAD_HINT = ("times come from the clock (`gitmem log add`, `gitmem now add` write them); a clock that runs fast "
               "writes the future: set it right (NTP), and let the tools date what you write")
LOG_DATED_AHEAD = _code(
    "GM309", "log-dated-ahead",
    "a new LOG entry or NOW block is dated more than `CLOCK_SKEW` (10 minutes) after the clock that judges it: "
    "`check`'s clock, or, for `verify`, its commit's committer date or the verifying clock",
    "{what} is dated {when}, {ahead} after the clock ({moment})", _AHEAD_HINT, since=4,
    commit=Message("{what} is dated {when}, {ahead} after its commit's committer date ({moment})", _AHEAD_HINT,
                   since=4),
    verifying=Message("{what} is dated {when}, {ahead} after the clock of this verify ({moment}); the clock "
                      "that wrote it and committed it ran fast", _AHEAD_HINT, since=4))
LOG_TIME_SKEW = _code(
    "GM310", "log-time-skew",
    "a LOG entry or NOW block is dated more than `CLOCK_SKEW` before the one it follows: entries are ordered by "
    "position (cycle number), so this is reported, not refused (rules 4; before them it was GM302 or GM103)",
    "{what} at {when} is {behind} earlier than the {before_what} it follows ({before}): one of the two clocks "
    "was off", "nothing to fix here; the entry with the wrong time is the one whose clock ran fast (GM309)",
    severity="warning", since=4)
_AMEND_HINT = "name the heading line of an invalid entry above: `gitmem status` lists each with its line"
LOG_AMENDMENT_INVALID = _code(
    "GM313", "log-amendment-invalid",
    "an amendment (`<timestamp> · amends line N · …`) names no entry above it, a valid one, or one already amended",
    since=4,
    nothing=Message("amends line {target}, which is not the heading of an entry above this one", _AMEND_HINT,
                    since=4),
    valid=Message("amends line {target}, whose entry is valid: only an invalid entry is amended",
                  "to add to a valid entry, write a new entry (`gitmem log add`)", since=4),
    twice=Message("amends line {target}, which line {by} already amends",
                  "line {by} stands in its place; to add to it, write a new entry (`gitmem log add`)", since=4))

_VOLUME_HINT = "a volume never changes: restore it (`git checkout HEAD -- {path}`); history is added to LOG.md"
LOG_VOLUME_CHANGED = _code(
    "GM314", "log-volume-changed",
    "a sealed LOG volume (`history/LOG-NNNN.md`, rules 6) was changed, removed or replaced: volumes never change",
    "sealed LOG volume {number} was changed", _VOLUME_HINT, since=6,
    removed=Message("sealed LOG volume {number} was removed or renamed", _VOLUME_HINT, since=6),
    not_a_file=Message("sealed LOG volume {number} is no longer a regular file", _VOLUME_HINT, since=6))
_SEAL_HINT = ("only the runner seals LOG (`gitmem cycle`, `gitmem close`): it moves LOG.md's oldest entries, byte "
              "for byte, into the next volume; remove this file, or restore LOG.md")
LOG_VOLUME_UNPROVEN = _code(
    "GM315", "log-volume-unproven",
    "a LOG volume added (rules 6) is not the next one, or does not hold exactly the oldest entries that left LOG.md",
    since=6,
    number=Message("LOG volume {number} is added, but the next volume is {next}", _SEAL_HINT, since=6),
    content=Message("LOG volume {number} does not hold exactly the oldest entries that left {log} (with its "
                    "title as the runner writes it), or an amendment still in {log} names an entry it took",
                    _SEAL_HINT, since=6),
    not_moved=Message("LOG volume {number} is added, but {log} still holds every entry", _SEAL_HINT, since=6),
    stray=Message("LOG volume {number} would be {path}, which was there before and no seal wrote (a file named like "
                  "a volume past a gap is no volume)",
                  "move {path} away (`git mv`) in a commit of its own, and the runner seals into that number",
                  since=6))
LOG_SEALS_DIVERGE = _code(
    "GM319", "log-seals-diverge",
    "a `git merge` or `git rebase` where both sides sealed LOG, not the same entries, a seal took entries the other "
    "side never had, or a side sealed and the other is no append (a rebase that renumbered the cycles a seal took): "
    "the merge driver cannot join them from LOG.md alone and leaves it to git",
    "a side sealed LOG entries into {folder} that git cannot join with the other side's (both sealed, not the same "
    "entries, entries the other side never had, or entries the other side renumbered)",
    "abort it (`git merge --abort` or `git rebase --abort`), then `gitmem merge BRANCH` (after a `git pull "
    "--rebase`: `gitmem merge origin/BRANCH`): it joins both sides' volumes into one history and seals it once")

# -- GM4xx LESSONS -----------------------------------------------------------------------------------------
LESSON_DUPLICATE_ID = _code(
    "GM401", "lesson-duplicate-id", "two lessons share an ID",
    "{id} is used more than once", "the next free ID is {next_id}")
LESSON_INCOMPLETE = _code(
    "GM402", "lesson-incomplete",
    "a lesson lacks `Happened`, `Why` or `Change`, or Happened is not `<date> (cycle N) — …`",
    "{id} lacks {missing}",
    happened=Message("{id}: Happened must read `YYYY-MM-DD (cycle N) — what`"), digits=_FIELD_DIGITS)
LESSON_CONFIRMATION_INVALID = _code(
    "GM403", "lesson-confirmation-invalid",
    "a confirmation's cycle is not later than the lesson's, or repeats a counted cycle",
    malformed=Message("a confirmation must read `YYYY-MM-DD (cycle M) — evidence`"),
    not_later=Message("confirmation from cycle {cycle} is not later than the lesson's cycle {lesson_cycle}"),
    repeated=Message("cycle {cycle} already confirmed this lesson"),
    digits=Message("a confirmation writes its cycle or time with digits other than 0-9", _DIGITS_HINT, since=3))
LESSON_STATUS_INVALID = _code(
    "GM404", "lesson-status-invalid", "a Status that is not `open`, `promoted R-NN` or `retired — <reason>`",
    "{id}: bad Status `{status}`", "use `open`, `promoted R-NN` or `retired — <reason>`",
    digits=Message("{id}: Status `{status}` writes a number with digits other than 0-9", _DIGITS_HINT, since=3))
LESSON_VANISHED = _code(
    "GM405", "lesson-vanished", "a lesson disappeared; lessons are history",
    "lesson {id} disappeared; lessons are history", "retire it with `- Status: retired — <reason>` instead")
LESSON_HEADING_MALFORMED = _code(
    "GM406", "lesson-heading-malformed", "a lesson heading is not `## L-0001 · title`", _HEADING_MSG,
    "use `## L-0001 · title`", digits=_HEADING_DIGITS)
LESSON_CYCLE_RENUMBERED = _code(
    "GM407", "lesson-cycle-renumbered",
    "a new `Happened` or `Confirmed` line names the cycle a LOG entry of the same change was written under, and "
    "that entry has another number now (a rebase or merge renumbered the entry but not the line)",
    "{id}'s {key} line names cycle {cycle}, but the LOG entry this change wrote as cycle {cycle} is cycle {now} now",
    "git ran no merge driver on LESSONS (only one side changed it), so its cycles did not follow LOG's: land it "
    "with `gitmem merge` instead (after a `git pull --rebase`: `git reset --keep ORIG_HEAD`, then `gitmem merge "
    "origin/BRANCH`), which renumbers both, or write cycle {now} in the line", since=6)

# -- GM5xx RULES -------------------------------------------------------------------------------------------
RULE_NOT_ONE_LINE = _code(
    "GM501", "rule-not-one-line", "a proven rule is not exactly one line",
    "a rule in `## {section}` must be exactly one `- R-NN · rule (provenance)` line",
    "join continuation lines into the rule line, or move prose above `## Proven rules`")
RULE_ID_DUPLICATE = _code(
    "GM502", "rule-id-duplicate", "a rule ID is duplicated or reused",
    "{id} is used more than once", "the next free ID is {next_id}",
    reused=Message("{id} was retired and may not be reused", "the next free ID is {next_id}"))
RULE_LESSON_MISSING = _code(
    "GM503", "rule-lesson-missing", "a rule's provenance names a lesson that does not exist",
    "{id} names {lesson}, which does not exist")
RULES_OVER_LIMIT = _code(
    "GM504", "rules-over-limit",
    "RULES is over `limits.rules_max_lines`, or has more than `limits.proven_rules_max` proven rules",
    lines=Message("RULES has {count} lines; the limit is {limit}",
                  "retire superseded rules or tighten the preamble; nothing is truncated"),
    proven=Message("{count} proven rules; the limit is {limit}", "retire a superseded rule before adding another"))
RULE_VANISHED = _code(
    "GM505", "rule-vanished", "a proven rule vanished without moving to `## Retired`, or a retired rule was deleted",
    proven=Message("{id} vanished without moving to `## Retired`",
                   "retire it with `(retired on YYYY-MM-DD: reason)` or `(superseded by R-NN …)`"),
    retired=Message("retired rule {id} was deleted; retired rules stay as history",
                    "restore its line under `## Retired`"))
RULE_LINE_MALFORMED = _code(
    "GM506", "rule-line-malformed", "a rule line is not `- R-NN · rule (provenance)`",
    proven=Message("malformed rule line in `## {section}`",
                   "`- R-07 · rule (from L-0012; cycles 160, 230)` or `(human)`"),
    retired=Message("malformed rule line in `## {section}`",
                    "`- R-03 · rule (superseded by R-07 on YYYY-MM-DD)` or `(retired on YYYY-MM-DD: reason)`"),
    digits=Message("rule line in `## {section}` writes a number with digits other than 0-9", _DIGITS_HINT, since=3))
RULES_SECTION_ORDER = _code(
    "GM507", "rules-section-order", "a free-text section follows the rule sections",
    "section `## {title}` after `## {proven}`; rule sections come last")
RULES_PROVEN_MISSING = _code(
    "GM508", "rules-proven-missing", "RULES has no `## Proven rules` section",
    "RULES.md has no `## {proven}` section")
RULES_TOO_BIG = _code(
    "GM509", "rules-too-big", "RULES grew over its share of the cycle's context (it is read whole, every cycle)",
    "RULES is {count} characters (its longest line {longest}); " + _OF_HARD,
    "shorten long lines and retire superseded rules, or raise cycle.max_context_tokens", since=2)

# -- GM6xx ROADMAP and the always_load files ---------------------------------------------------------------
ROADMAP_SECTION_TOO_BIG = _code(
    "GM601", "roadmap-section-too-big", "a new or changed ROADMAP section is over its share of the cycle's context",
    "ROADMAP section `{title}` is {count} characters; " + _OF_HARD,
    "split it into smaller sections: a cycle reads only the current one", since=2)
ALWAYS_LOAD_TOO_BIG = _code(
    "GM602", "always-load-too-big", "the `cycle.always_load` files grew over their share of the cycle's context",
    "the {files} cycle.always_load file(s) are {count} characters together; " + _OF_HARD,
    "load fewer or shorter files; the agent can search the rest", since=2)

# -- GM7xx the cycle runner --------------------------------------------------------------------------------
CYCLE_NO_COMMITS = _code(
    "GM701", "cycle-no-commits", "the cycle refused to start: the repository has no commits yet", "{message}")
CYCLE_DETACHED_HEAD = _code(
    "GM702", "cycle-detached-head", "the cycle refused to start: HEAD is not on a branch", "{message}")
CYCLE_LOCK_HELD = _code(
    "GM703", "cycle-lock-held", "the cycle refused to start: another cycle or close holds the lock", "{message}")
CYCLE_DIRTY_TREE = _code(
    "GM704", "cycle-dirty-tree", "the cycle refused to start: the work tree has uncommitted changes", "{message}")
CYCLE_INVALID_MEMORY = _code(
    "GM705", "cycle-invalid-memory", "the cycle refused to start: memory does not pass `gitmem check --worktree`, or "
    "the memory it starts from is invalid as it stands (a bad entry committed without the check)",
    "{message}")
CYCLE_OVER_BUDGET = _code(
    "GM706", "cycle-over-budget", "the reading budget is over its hard limit", "{message}")
CYCLE_NO_SANDBOX = _code(
    "GM707", "cycle-no-sandbox", "the cycle refused to start: `agent.sandbox: bubblewrap` and bwrap cannot run "
    "here, `agent.sandbox.writable` or the work tree is the HOME, a folder holding it or one of its data folders, "
    "or run by root the box could not give the agent a work tree another user owns",
    "{message}", since=3)
CYCLE_AGENT_FAILED = _code(
    "GM710", "cycle-agent-failed", "the agent failed or timed out; its work was saved on a salvage branch",
    "{message}")
CYCLE_PUSH_CONFLICT = _code(
    "GM711", "cycle-push-conflict", "the push conflicted; the work was saved on a side branch", "{message}")
CYCLE_PUSH_FAILED = _code(
    "GM712", "cycle-push-failed",
    "the push failed (every retry, or its side branch's push too): the work is only on this machine's disk",
    "{message}")
CYCLE_LOCAL_COMMITS = _code(
    "GM713", "cycle-local-commits",
    "commits were made in the runner's checkout during the cycle; they were kept on a named branch", "{message}")
CYCLE_FILE_HELD = _code(
    "GM714", "cycle-file-held", "a file over `cycle.max_file_bytes`, or larger than the disk's free space, was kept "
    "out of the cycle's commit, in .git/gitmem/held/", "{message}", severity="warning", since=2)
CYCLE_UPSTREAM_REWRITTEN = _code(
    "GM715", "cycle-upstream-rewritten",
    "the remote branch was rewritten since this checkout last saw it; nothing was pushed, the work is on a branch",
    "{message}", since=2)
CYCLE_REFS_BACKUP_FAILED = _code(
    "GM716", "cycle-refs-backup-failed",
    "the runner could not back up the human's unpushed refs before the agent ran, or restore them after it",
    "{message}", since=3)
CYCLE_RULES_PLACEHOLDERS = _code(
    "GM717", "cycle-rules-placeholders",
    "the cycle refused to start: RULES.md still holds the template's placeholders (`<agent name>`)", "{message}",
    since=3, line=Message("placeholder {text} left: every prompt reads it, so the agent would start without it",
                          "fill in who the agent is and who its human is, commit, then run the cycle"))
CYCLE_PUSH_REFUSED = _code(
    "GM718", "cycle-push-refused",
    "the remote refused the push for good (branch protection, a ruleset, a hook); the work is on a side branch",
    "{message}", since=3)
CYCLE_TRUST_ANCHOR_CHANGED = _code(
    "GM719", "cycle-trust-anchor-changed",
    "a git-ignored place the human's tools run code from (.venv, venv, .direnv, .env) changed during the cycle",
    "{message}", severity="warning", since=3)
CYCLE_REPOSITORY_HELD = _code(
    "GM720", "cycle-repository-held",
    "a git repository the agent made inside the work tree was kept out of the cycle's commit, in "
    ".git/gitmem/held/", "{message}", severity="warning", since=3)
CYCLE_LOG_REFUSED = _code(
    "GM721", "cycle-log-refused",
    "the memory rules refused the runner's own no-build entry: nothing was committed to the branch, and the "
    "agent's work is on its salvage branch", "{message}", since=4)
CYCLE_SESSION_WRITE_REFUSED = _code(
    "GM722", "cycle-session-write-refused",
    "a session's memory write (outside any cycle) was refused: a cycle or a close runs in this checkout and would "
    "commit the write as its agent's; nothing was written", "{message}", since=6)
MEMORY_WRITE_UNMERGED = _code(
    "GM723", "memory-write-unmerged",
    "a session's memory write (outside any cycle) was refused: git stopped a merge on a conflict in a memory file, "
    "and the write would land among its conflict markers; nothing was written",
    "git stopped a merge on a conflict in {path}: a write now would land among its conflict markers",
    "resolve the conflict and `git add {path}` (or `git merge --abort`), then write again", since=6)
CYCLE_DISK_FULL = _code(
    "GM725", "cycle-disk-full",
    "the disk holding the repository was full (ENOSPC or EDQUOT): the cycle did not run its agent, or failed "
    "after it with what it could write; nothing of the human's is lost", "{message}", since=5)
_DAY_AHEAD_HINT = ("write the day it happened or was asked (`gitmem decision ask`, `gitmem lesson add` and "
                   "`gitmem lesson confirm` take it from the clock); a clock that runs fast writes the future: set "
                   "it right (NTP)")
MEMORY_DATED_AHEAD = _code(
    "GM730", "memory-dated-ahead",
    "a new decision's `Asked` time is more than `CLOCK_SKEW` after the clock that judges it, or a new lesson's "
    "`Happened` or `Confirmed` day is after the day anywhere on Earth by that clock (`check`'s clock, or, for "
    "`verify`, its commit's committer date or the verifying clock)",
    "{what} is dated {when}, after the clock ({moment})", _DAY_AHEAD_HINT, since=5,
    commit=Message("{what} is dated {when}, after its commit's committer date ({moment})", _DAY_AHEAD_HINT,
                   since=5),
    verifying=Message("{what} is dated {when}, after the clock of this verify ({moment}); the clock that wrote "
                      "it and committed it ran fast", _DAY_AHEAD_HINT, since=5))
CYCLE_GIT_LOCKED = _code(
    "GM740", "cycle-git-locked",
    "the cycle refused to start: a git lock file (.git/index.lock, a branch's .lock) is there, so git could not "
    "write what it locks", "{message}", since=5)
CYCLE_OVER_DAILY_CAP = _code(
    "GM750", "cycle-over-daily-cap",
    "the cycle refused to start: today's cycles recorded more tokens or cost in LOG Evidence than "
    "`cycle.tokens_per_day` / `cycle.cost_per_day` allow", "{message}", since=5)
CYCLE_PATH_HELD = _code(
    "GM775", "cycle-path-held",
    "a file on a path that a file system takes for `.git` (`.git.`, `.git `, `GIT~1`, a name with a code point macOS "
    "ignores), or whose name is not UTF-8, which git refuses to store or a clone on macOS or Windows refuses to "
    "check out, or a folder nested 100 levels down, which gitmem's git library cannot list, was kept out of the "
    "cycle's commit, in .git/gitmem/held/", "{message}", severity="warning", since=5)
CYCLE_RUNNABLE_HELD = _code(
    "GM776", "cycle-runnable-held",
    "a file pytest runs by its name (`conftest.py`, a module `python_files` names, `test*.txt`) that the agent "
    "made or changed in a "
    "git-ignored folder pytest collects from, where no diff shows it, was moved out of the work tree, to "
    ".git/gitmem/held/, as `<name>.held`", "{message}", severity="warning", since=6)

# -- GM8xx the daily close ---------------------------------------------------------------------------------
CLOSE_REFUSED = _code(
    "GM801", "close-refused", "the close refused to run (a future day, no commits, dirty memory, a held lock)",
    "{message}")
CLOSE_INVALID_RESULT = _code(
    "GM802", "close-invalid-result", "the close would have left invalid memory; nothing was committed", "{message}")
CLOSE_PUSH_FAILED = _code(
    "GM803", "close-push-failed", "the close's push conflicted or failed; the close commit is safe on a branch",
    "{message}")

# -- GM9xx the whole repository ----------------------------------------------------------------------------
CONFLICT_MARKERS = _code(
    "GM901", "conflict-markers", "a memory file contains merge conflict markers",
    "merge conflict marker; resolve the conflict before committing")
NOT_UTF8 = _code(
    "GM902", "not-utf8", "a memory file is not valid UTF-8",
    "not valid UTF-8 (byte {byte}: {reason})",
    "save the file as UTF-8; LOG, which is append-only, only by replacing each byte that is not UTF-8 with U+FFFD")
_SECRET_FILE = Message("this looks like {what}; remove it and rotate it",
                       "secrets belong in the environment; for a fixture or an example, list the path in {allowlist}")
_SECRET_NAME = Message("the file name looks like {what}; rename the file and rotate the secret")
_SECRET_LINK = Message("the symlink's target looks like {what}; remove the link and rotate the secret")
# Rules 5: `verify` reads every file a commit brings, as `check` reads every staged one (before, only memory).
_COMMITTED = 5
SECRET_LIKE_TOKEN = _code(
    "GM903", "secret-like-token",
    "a changed file (memory or any other text file), its name or a symlink's target looks like a secret",
    "this looks like {what}; remove it and rotate it", "secrets belong in the environment, never in memory",
    file=_SECRET_FILE, name=_SECRET_NAME, link=_SECRET_LINK,
    committed_file=Message(_SECRET_FILE.text, _SECRET_FILE.hint, since=_COMMITTED),
    committed_name=Message(_SECRET_NAME.text, _SECRET_NAME.hint, since=_COMMITTED),
    committed_link=Message(_SECRET_LINK.text, _SECRET_LINK.hint, since=_COMMITTED))
MEMORY_FILE_MISSING = _code(
    "GM904", "memory-file-missing", "a memory file is missing",
    "memory file {path} is missing", "run `gitmem init` to create the missing files",
    # The staged check, for a file the work tree holds: `gitmem init` would leave it alone.
    unstaged=Message("memory file {path} is not staged", "it is in the work tree: stage it with `git add {path}`"),
    # Staged: git holds the file only as a conflict's sides (a merge or rebase stopped on it), not missing.
    unmerged=Message("memory file {path} is unmerged: git stopped a merge on a conflict in it",
                     "resolve the conflict and `git add` the file (or `git merge --abort`)"))
NON_CANONICAL_ENCODING = _code(
    "GM905", "non-canonical-encoding", "CRLF line endings or a byte order mark (accepted, with a warning)",
    severity="warning",
    bom=Message("file starts with a UTF-8 byte order mark; it is accepted, canonical files have none"),
    crlf=Message("CRLF line endings; they are accepted, canonical files use LF"))
HISTORY_REWRITTEN = _code(
    "GM906", "history-rewritten", "the verified range is not a descendant: history was rewritten",
    "{end} does not descend from {start}: history was rewritten (force-push?)",
    "memory history is append-only; restore the old history and add new commits on top")
TITLE_MISSING = _code(
    "GM907", "title-missing", "a memory file does not start with its `# TITLE` line",
    "{role} must start with a `# ` title line such as `{title}`")
_PUT_THE_FILE = "put the file itself there (`git checkout HEAD -- {path}` restores the committed one) and stage it"
_PUT_THE_FOLDER = ("remove it (`git rm --cached {path}`, then delete it; a link is removed, never followed) and "
                   "commit: gitmem makes the folder itself when it first writes there")
NOT_A_REGULAR_FILE = _code(
    "GM908", "not-a-regular-file",
    "a path gitmem owns (a memory file, ROADMAP, a `cycle.always_load` file, gitmem.yaml, a prompt, a file the "
    "template installs, the `history/` folder of LOG's volumes) is not its kind: a symbolic link, a submodule, a "
    "FIFO, a directory where a file belongs or the reverse, or it is reached through one",
    "{path} {what}; it must be a regular file (git mode 100644 or 100755) inside the work tree",
    _PUT_THE_FILE, since=2,
    owned_file=Message("{path} {what}; gitmem reads or installs it, so it must be a regular file (git mode 100644 "
                       "or 100755) inside the work tree", _PUT_THE_FILE, since=6),
    folder=Message("{path} {what}; gitmem writes LOG's sealed volumes there, so it must be a plain folder (or "
                   "missing)", _PUT_THE_FOLDER, since=6),
    on_the_way=Message("{path} {what}, on the way to {owned}, which gitmem owns; it must be a plain folder (or "
                       "missing)", _PUT_THE_FOLDER, since=6))
CONTROL_CHARACTER = _code(
    "GM920", "control-character",
    "a memory file holds NUL, a bare carriage return or another control character",
    "{what} at byte {byte}; memory files are plain text",
    "remove it (a bare CR shows as a line break in some viewers, and NUL makes git treat the file as binary)", since=2)
UNCLOSED_FENCE = _code(
    "GM921", "unclosed-fence", "a code fence is opened and never closed, so every heading after it is code",
    "the code fence opened on this line is never closed: every heading below it would be code",
    "close it with a line of three backticks before the next heading", since=2)
MEMORY_REMAPPED = _code(
    "GM922", "memory-remapped-without-content",
    "gitmem.yaml maps a memory role to another file that does not carry the old file's content forward",
    "gitmem.yaml now maps {role} to {new} instead of {old}, and {new} does not carry {old}'s content forward",
    "move the file with its content in the same commit: `git mv {old} {new}`", since=2)
CROSS_WORKSPACE_WRITE = _code(
    "GM923", "cross-workspace-write",
    "a commit by the agent changed the memory of more than one workspace: a cycle writes only its own",
    "a commit by the agent changed the memory of {count} workspaces ({names}); a cycle of one workspace may "
    "write only that workspace's memory",
    "put the other workspaces' files back (`git checkout HEAD~1 -- {path}`); a human's commit may change any "
    "workspace", since=3,
    # Rules 5: the agent is recognised as GM207 recognises it, also when its email is written with characters
    # git trims (` agent@x`); before, such a commit passed here as a human's.
    normalised=Message("a commit by the agent (its email written with characters git trims) changed the memory of "
                       "{count} workspaces ({names}); a cycle of one workspace may write only that workspace's "
                       "memory",
                       "put the other workspaces' files back (`git checkout HEAD~1 -- {path}`); a human's commit "
                       "may change any workspace", since=5),
    # Rules 5: a file several workspaces share is each sharer's own (gitmem.config.ownership), so a commit is one
    # workspace's only when that workspace owns every memory file it changes; before, a shared file was counted
    # for nobody, and the default agent could commit two other workspaces' shared ROADMAP beside its own LOG.
    shared=Message("a commit by the agent changed memory files that no one workspace owns all of ({names}, "
                   "counting each shared file for every workspace sharing it); a cycle of one workspace may write "
                   "only that workspace's memory and the files it shares",
                   "put the other workspaces' files back (`git checkout HEAD~1 -- {path}`); a human's commit "
                   "may change any workspace", since=5))
SIDE_MERGE_CONFLICT = _code(
    "GM924", "side-merge-conflict",
    "`gitmem merge` refused a branch: a file of it does not merge by memory rules; nothing was changed",
    "{path} does not merge with {branch} by memory rules (the same entry or line changed on both sides, or a "
    "file gitmem does not merge); nothing was changed",
    "merge by hand: `git merge {branch}`, resolve, then `gitmem check`", since=6)
MERGE_DRIVER_MISSING = _code(
    "GM925", "merge-driver-missing",
    "`.gitattributes` has the memory files merged by gitmem's merge driver, and this clone's git config has none "
    "(git does not copy config with a clone): `git pull --rebase` and `git merge` then conflict line by line",
    "the memory files merge by gitmem's merge driver here ({attribute}), and this clone has no "
    "merge.{name}.driver in its git config: `git pull --rebase` and `git merge` would conflict line by line",
    "run `gitmem init` once in this clone (it registers the driver; git never copies config with a clone)",
    severity="warning", since=6)
CONFIG_UNKNOWN_RANKER = _code(
    "GM926", "config-unknown-ranker",
    "gitmem.yaml's `recall.rankers` names a ranker gitmem does not have; the config is refused",
    "recall.rankers: {name!r} is no ranker of gitmem's (known: {known}){meant}",
    "name a known ranker, or remove the line", since=6)
# The other refusals of gitmem.yaml and of a fleet file, by kind; each keeps its own words after the code
# (gitmem.config.refused writes them all, at the key's line, line 1 when no line means anything).
CONFIG_WRONG_TYPE = _code(
    "GM927", "config-wrong-type",
    "a setting of gitmem.yaml or of a fleet file holds the wrong kind of value (text where a number belongs, a "
    "list where a mapping does); the config is refused", "{message}", since=6)
CONFIG_BAD_VALUE = _code(
    "GM928", "config-bad-value",
    "a setting of gitmem.yaml or of a fleet file holds a value it does not take (out of its range, none of its "
    "choices, a path that is not one, a name given twice, a required key missing); the config is refused",
    "{message}", since=6)
CONFIG_UNKNOWN_NAME = _code(
    "GM929", "config-unknown-name",
    "gitmem.yaml or a fleet file has a key gitmem does not know (gitmem.yaml's is ignored with a warning, a "
    "fleet file's refused), or `--workspace` names a workspace gitmem.yaml does not define",
    "{message}", since=6)
CONFIG_UNREADABLE = _code(
    "GM930", "config-unreadable",
    "gitmem.yaml or a fleet file cannot be read as a config: not valid UTF-8, not valid YAML, nested or sized "
    "past the bounds, missing (a fleet file), or not a regular file; it is refused", "{message}", since=6)
# Not a refusal of the fleet file: the agent its entry names could not be read, and every other agent still is.
FLEET_AGENT_UNREADABLE = _code(
    "GM931", "fleet-agent-unreadable",
    "an agent of a fleet file could not be read (its path is no directory, not the top of a git work tree, or holds "
    "no gitmem memory; its fetch failed; its workspace is not in its gitmem.yaml); its row says why, every other "
    "agent is still read, and the command exits 2", "{agent}: {error}", since=6)
# One rule for both ways a fleet file can hold one agent twice (gitmem.fleet.duplicates): its page would stand
# behind another's link, or its decisions would show twice in the inbox and its spending count twice.
FLEET_AGENT_TWICE = _code(
    "GM932", "fleet-agent-twice",
    "two entries of a fleet file are one agent: the same name (ignoring case: the name is its page's file name), or "
    "the same repository, branch and workspace however spelt (`./a` and `a/`, a link to it, another case of it, "
    "a `file://` URL of it; two workspace names of one folder), whose "
    "decisions would show twice in the inbox and whose spending would count twice against the budget; the fleet "
    "file is refused", "{message}", since=6)

# -- GM950-GM969 import and export (gitmem.interop) -----------------------------------------------------------
IMPORT_SOURCE_UNREADABLE = _code(
    "GM950", "import-source-unreadable",
    "a file of an import source is a link out of its directory, not a regular file, too large or not UTF-8; "
    "nothing was imported",
    "{what}", "{fix}", since=5)
IMPORT_FRONTMATTER_INVALID = _code(
    "GM951", "import-frontmatter-invalid",
    "a topic file of an import source (a memory with a name and type) opens a YAML frontmatter that does not parse "
    "or is not a mapping; nothing was imported",
    "{what}", "fix the frontmatter between the two `---` lines (or remove it), then import again", since=5)
IMPORT_SOURCE_MISSING = _code(
    "GM952", "import-source-missing", "an import source's directory or file is not where its CLI keeps it",
    "{what}", "{fix}", since=5)
EXPORT_TARGET_REFUSED = _code(
    "GM953", "export-target-refused",
    "an export would overwrite a file that is not one this memory exported, or another export format's file "
    "(without --force), or write through a link; nothing was written",
    "{what}", "{fix}", since=5)
IMPORT_BATCH_OVER_PENDING = _code(
    "GM954", "import-batch-over-pending",
    "an import's one decision would put DECISIONS Pending over its size or its number of decisions; the whole "
    "batch was refused and nothing was written",
    size=Message("this import's decision ({facts} facts) would make Pending {count} characters; " + _OF_HARD +
                 "; the whole batch is refused",
                 "answer Pending decisions first, or import a part of the source (--from a folder with fewer of its "
                 "files)"),
    count=Message("this import's decision would be Pending decision {count}; the limit is {limit} "
                  "(limits.pending_max); the whole batch is refused",
                  "answer Pending decisions first, then import again"), since=5)
IMPORT_PATCH_INVALID = _code(
    "GM955", "import-patch-invalid",
    "a proposed patch in Gemini CLI's memory inbox is not a unified diff with a hunk; nothing was imported",
    "{what}", "remove the patch (Gemini CLI discards a patch it cannot apply), or fix it, then import again",
    since=5)

CODES: tuple[Code, ...] = tuple(value for value in list(globals().values()) if isinstance(value, Code))
BY_CODE: dict[str, Code] = {item.code: item for item in CODES}
# The codes `gitmem check` and `gitmem verify` report about memory files; the others are the runner's.
# The import and export codes (GM950-GM969) refuse a command's input; no check of a commit reports them.
CHECK_CODES: tuple[Code, ...] = tuple(item for item in CODES
                                      if item.code[2] not in "78" and not item.code.startswith(("GM95", "GM96")))


def lookup(code: str) -> Code:
    return BY_CODE[code]
