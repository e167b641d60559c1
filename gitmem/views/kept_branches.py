"""The branches gitmem left for a human, for `gitmem status`: where each is and what to do with it.

The runner keeps work off the main branch in a few named families: a failed cycle's (`gitmem/salvage/`), the
agent's edits of protected paths awaiting a decision (`gitmem/proposal/`), commits made in the checkout during
a cycle (`gitmem/local/`), and the side branch of a push that conflicted, met a rewritten upstream or was
refused (`gitmem/cycle-N`, `gitmem/close-DAY`, the memory branch's `-conflict`). Each waits until a human
merges or deletes it. A branch the upstream already contains waits on nothing, and pull-request mode's own branch
(`gitmem/memory`, `gitmem/memory-N`) waits in its pull request, not here.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace

from gitmem import gitio
from gitmem.memory import decisions

NAMESPACE = "gitmem/"
KINDS = (     # (name prefix, kind, a short hint for the dashboard, what to do), the first match wins
    ("gitmem/salvage/", "salvage", "review it, cherry-pick what is worth keeping",
     "a failed cycle's unfinished work: read it (git log -p HEAD..{name}), take what is worth keeping "
     "(git cherry-pick), then delete the branch"),
    ("gitmem/proposal/", "proposal", "answer its decision; git merge applies it",
     "the agent's edits of protected paths: answer the Pending decision that asks about them; to apply them, "
     "git merge {name}"),
    ("gitmem/local/", "local", "review it, merge what is yours",
     "commits made in the checkout while a cycle ran: review them (git log -p HEAD..{name}) and merge "
     "what is yours"),
    ("gitmem/", "side", "merge it through a pull request",
     "a cycle's or close's work whose push conflicted, met a rewritten upstream or was refused: merge it "
     "through a pull request (or git merge {name}), then delete the branch"),
)


@dataclass(frozen=True)
class KeptBranch:
    name: str
    kind: str              # salvage, proposal, local or side
    remotes: tuple[str, ...]   # the remotes that have it; none: it is only on this machine
    local: bool
    commits: int           # commits on it that the landed history lacks
    hint: str              # what to do, in a few words
    todo: str              # what to do, with the commands
    answered: str | None = None    # a proposal's decision, once answered
    deletable: bool = False        # its decision was answered No: nothing waits on it

    @property
    def only_here(self) -> bool:
        return not self.remotes

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "kind": self.kind, "local": self.local, "remotes": list(self.remotes),
                "only_on_this_machine": self.only_here, "commits": self.commits, "hint": self.hint,
                "todo": self.todo, "answered": self.answered, "deletable": self.deletable}


# An answer that declines: its first words say no. Anything else is read as "apply it", which the human does.
_DECLINED = re.compile(r"^[\W_]*(?:no|nope|don'?t|do not|drop|reject(?:ed)?|decline[d]?|discard|delete|skip)\b",
                       re.IGNORECASE)


@dataclass(frozen=True)
class ProposalAnswer:
    """The answered decision that asked whether to apply a proposal branch (gitmem.cycle.proposals)."""

    decision: str
    answer: str
    declined: bool


def proposal_answer(name: str, doc: decisions.DecisionsDoc) -> ProposalAnswer | None:
    """The answer to the decision that names proposal branch `name` (the runner names it in the decision it
    asks), or None while none is answered. `name` may carry a remote (`origin/gitmem/proposal/cycle-3`)."""
    branch = name[name.find(NAMESPACE):] if NAMESPACE in name else name
    if not branch.startswith(NAMESPACE + "proposal/"):
        return None
    named = re.compile(rf"(?<![\w/-]){re.escape(branch)}(?![\w/-])")
    for item in doc.settled:
        if named.search(item.content()):
            answer = " ".join((item.get("Answer") or "").split())
            return ProposalAnswer(item.id, answer, bool(_DECLINED.match(answer)))
    return None


def shell_word(text: str) -> str:
    """`text` as one word of a command the human may paste: a ref or remote name can hold `;`, `$`, `|` or a
    backquote (git allows them), which a shell would run. A plain name is left as it is."""
    return shlex.quote(text)


def delete_commands(name: str, local: bool, remotes: tuple[str, ...]) -> str:
    """The commands that delete branch `name` here and on `remotes`."""
    branch = shell_word(name)
    steps = ([f"git branch -D {branch}"] if local else []) + \
        [f"git push {shell_word(remote)} --delete {branch}" for remote in remotes]
    return "; ".join(steps)


def with_answers(branches: list[KeptBranch], doc: decisions.DecisionsDoc) -> list[KeptBranch]:
    """`branches` with what each proposal's answered decision leaves to do: after a No, delete the branch;
    after any other answer, apply it as answered (git merge), then delete it."""
    found = []
    for branch in branches:
        answer = proposal_answer(branch.name, doc) if branch.kind == "proposal" else None
        if answer is None:
            found.append(branch)
            continue
        delete = delete_commands(branch.name, branch.local, branch.remotes)
        if answer.declined:
            found.append(replace(branch, answered=answer.decision, deletable=True,
                                 hint=f"{answer.decision} answered No: delete it ({delete})",
                                 todo=f"{answer.decision} answered \"{answer.answer}\": nothing waits on this branch; "
                                      f"delete it: {delete}"))
        else:
            found.append(replace(branch, answered=answer.decision,
                                 hint=f"{answer.decision} is answered: apply it as answered, then delete it",
                                 todo=f"{answer.decision} answered \"{answer.answer}\": to apply it, git merge "
                                      f"{shell_word(branch.name)}; then delete it: {delete}"))
    return found


def kept_branches(repo: gitio.Repo) -> list[KeptBranch]:
    """Every gitmem branch, local or fetched from a remote, with commits that have not landed; by kind, then
    name."""
    tips: dict[str, dict[str, str]] = {}           # name -> {"" (local) or a remote: its tip}
    for ref in gitio.references(repo, f"refs/heads/{NAMESPACE}"):
        tips.setdefault(ref.removeprefix("refs/heads/"), {})[""] = gitio.resolve_revision(repo, ref)
    for remote in gitio.remote_names(repo):
        prefix = f"refs/remotes/{remote}/"
        for ref in gitio.references(repo, prefix + NAMESPACE):
            tips.setdefault(ref.removeprefix(prefix), {})[remote] = gitio.resolve_revision(repo, ref)
    head = landed(repo)
    found: list[KeptBranch] = []
    for name, where in tips.items():
        if gitio.is_memory_branch(name):
            continue
        tip = where.get("") or next(iter(where.values()))
        if head is not None and gitio.is_ancestor(repo, tip, head):
            continue                                # landed: nothing waits
        kind, hint, todo = next((kind, hint, todo) for prefix, kind, hint, todo in KINDS if name.startswith(prefix))
        remotes = tuple(sorted(r for r, t in where.items() if r and t == tip))   # a remote has all of it
        found.append(KeptBranch(name, kind, remotes, "" in where, gitio.count_range(repo, head, tip) if head else 0,
                                hint, todo.format(name=shell_word(name))))
    order = [kind for _, kind, _, _ in KINDS]
    return sorted(found, key=lambda b: (order.index(b.kind), b.name))


def landed(repo: gitio.Repo) -> str | None:
    """What has landed: the remote branch the current branch tracks, as last fetched, else HEAD. A refused
    push leaves the work on local main too: it has not landed until the remote has it."""
    branch = gitio.current_branch(repo)
    if branch is not None:
        remote, upstream = gitio.upstream_of(repo, branch)
        tip = gitio.remote_branch_oid(repo, remote, upstream)
        if tip is not None:
            return tip
    return gitio.head_id(repo)
