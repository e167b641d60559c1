"""`gitmem import` and `gitmem export`: the memories other agent CLIs keep, brought into the repository for the
human's review, and the repository's memory written back out in their formats.

One module per source format reads it into `Fact`s (facts.py): claude_code.py, codex.py, gemini.py, cline.py,
agent_memory_repo.py, notes.py, with topic_files.py for the index-and-topic-files shape two of them share and
shapes.py for the markdown they all share. sources.py reads their files confined to their directory; plan.py
decides what of a batch is new, what supersedes an earlier import and what is already there; importing.py masks
secrets and lands the batch through the memory writer; export.py writes the other way.
"""
