"""`gitmem import` and `gitmem export`: the memories other agent CLIs keep, brought into the repository for the
human's review, and the repository's memory written back out in their formats.

One module per source format reads it into `Fact`s (gitmem.interop.facts): `claude_code`, `codex`, `gemini`,
`cline`, `agent_memory_repo`, `notes`. `sources` reads their files confined to their directory; `plan` decides
what of a batch is new, what supersedes an earlier import and what is already there; `land` writes the batch
through the memory writer; `export` writes the other way.
"""
