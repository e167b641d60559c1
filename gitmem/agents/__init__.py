"""Agent backends: the anthropic tool loop, any agent CLI (`command`), and `scripted` replays."""
from __future__ import annotations
