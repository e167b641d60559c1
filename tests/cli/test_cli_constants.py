"""The command modules load only click (so `gitmem --help` and every command's --help stay fast), so they
repeat a few of the library's constants for their options and help texts. Each copy is held to its original
here: a change on one side alone fails."""
from __future__ import annotations

from gitmem.cli import github, init, interop, recall
from gitmem.config import RECALL_MODES
from gitmem.interop.export import EXPORT_FORMATS
from gitmem.publish.pullrequest import DEFAULT_BRANCH
from gitmem.publish.required_check import REQUIRED_CHECK
from gitmem.recall.corpus import KINDS
from gitmem.scaffold.agent_clis import AGENTS


def test_every_constant_the_commands_repeat_is_the_librarys() -> None:
    from gitmem.interop import importing

    assert github.DEFAULT_BRANCH == DEFAULT_BRANCH
    assert github.REQUIRED_CHECK == REQUIRED_CHECK
    assert init.AGENTS == AGENTS
    assert recall.KINDS == KINDS
    assert recall.MODES == RECALL_MODES
    assert interop.EXPORT_FORMATS == EXPORT_FORMATS
    assert interop.SOURCES == tuple(importing.SOURCE_READERS)
