"""The effective config as plain data (defaults included), and one value of it by dotted key: `gitmem config`."""
from __future__ import annotations

from dataclasses import asdict, fields, is_dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.config import Config


class UnknownKey(KeyError):
    """A dotted key that names no value of the config; its message says which key, and the closest one."""

    def __str__(self) -> str:
        return str(self.args[0])


def config_data(config: Config) -> dict[str, object]:
    """The config as JSON-shaped data, as gitmem.yaml spells it: dataclasses and `workspaces` as dicts, tuples
    as lists; without the fields loading fills in (LOADED_FIELDS), which no one can set."""
    from gitmem.config import LOADED_FIELDS

    data = {spec.name: _plain(getattr(config, spec.name)) for spec in fields(config) if spec.name not in LOADED_FIELDS}
    data["workspaces"] = {name: _plain(files) for name, files in config.workspaces}
    return data


def _plain(value: object) -> object:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def value_at(data: object, key: str | None) -> object:
    """The value a dotted `key` (`agent.email`) names in `config_data`'s data (all of it without a key);
    UnknownKey when it names none."""
    from gitmem.config import did_you_mean

    value, prefix = data, ""
    for part in key.split(".") if key else ():
        if not isinstance(value, dict) or part not in value:
            hint = did_you_mean(part, value, prefix) if isinstance(value, dict) else ""
            raise UnknownKey(f"unknown config key {key!r}{hint}")
        value, prefix = value[part], f"{prefix}{part}."
    return value
