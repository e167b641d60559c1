"""The effective config as plain data (defaults included), and one value of it by dotted key: `gitmem config`."""
from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.config import Config


class UnknownKey(KeyError):
    """A dotted key that names no value of the config."""


def config_data(config: Config) -> object:
    """The config as JSON-shaped data: dataclasses as dicts, tuples as lists."""
    return _plain(config)


def _plain(value: object) -> object:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def value_at(data: object, key: str | None) -> object:
    """The value a dotted `key` (`agent.email`) names in `config_data`'s data (all of it without a key);
    UnknownKey when it names none."""
    value = data
    for part in key.split(".") if key else ():
        if not isinstance(value, dict) or part not in value:
            raise UnknownKey(key)
        value = value[part]
    return value
