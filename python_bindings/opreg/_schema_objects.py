"""Schema objects and op tags, as torch.library users know them.

`FunctionSchema` is what `OpOverload.schema` and `CustomOpDef.schema` return: the canonical
schema text (it *is* a `str`, so comparisons and printing are unchanged) with torch's
`FunctionSchema` attributes: `name`, `overload_name`, `arguments`, `returns`, `is_mutable`,
each argument with `name`, `type`, `default_value`, `kwarg_only` and `alias_info`
(`before_set`, `after_set`, `is_write`).

`Tag` has one member per op tag opreg accepts (torch's `tags.yaml` names); `Library.define`
takes them, torch.Tag values, or their names.
"""
from __future__ import annotations

import enum
from typing import Any, Dict, List, Optional, Tuple

from . import _C

__all__ = ["AliasInfo", "Argument", "FunctionSchema", "Tag", "tag_name"]


class AliasInfo:
    """An argument's alias annotation: `Tensor(a!)` has before_set {"a"} and is_write True."""

    __slots__ = ("before_set", "after_set", "is_write")

    def __init__(self, info: Dict[str, Any]) -> None:
        self.before_set = set(info["before_set"])
        self.after_set = set(info["after_set"])
        self.is_write: bool = info["is_write"]

    def __repr__(self) -> str:
        return f"AliasInfo(before_set={sorted(self.before_set)}, is_write={self.is_write})"


class Argument:
    """One argument or return of a schema."""

    __slots__ = ("name", "type", "N", "kwarg_only", "default_value", "alias_info", "_text",
                 "_has_default")

    def __init__(self, info: Dict[str, Any]) -> None:
        self.name: str = info["name"]
        self.type: str = info["type"]
        self.N: Optional[int] = info["N"]
        self.kwarg_only: bool = info["kwarg_only"]
        self._has_default = info["default_str"] is not None
        self.default_value: Any = info["default"]
        self.alias_info: Optional[AliasInfo] = (AliasInfo(info["alias_info"])
                                                if info["alias_info"] is not None else None)
        self._text: str = info["text"]

    @property
    def has_default_value(self) -> bool:
        return self._has_default

    @property
    def is_write(self) -> bool:
        return self.alias_info is not None and self.alias_info.is_write

    @property
    def is_out(self) -> bool:
        return self.kwarg_only and self.is_write

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Argument({self._text!r})"


class FunctionSchema(str):
    """A canonical schema: the text, with its parts parsed on first use."""

    __slots__ = ("_info",)

    def _parts(self) -> Dict[str, Any]:
        try:
            return self._info  # type: ignore[no-any-return]
        except AttributeError:
            self._info: Dict[str, Any] = _C._schema_info(str(self))
            self._info["arguments"] = [Argument(a) for a in self._info["arguments"]]
            self._info["returns"] = [Argument(r) for r in self._info["returns"]]
            return self._info

    @property
    def name(self) -> str:
        """'ns::op' (without the overload)."""
        return str(self._parts()["name"])

    @property
    def overload_name(self) -> str:
        return str(self._parts()["overload_name"])

    @property
    def arguments(self) -> List[Argument]:
        return list(self._parts()["arguments"])

    @property
    def returns(self) -> List[Argument]:
        return list(self._parts()["returns"])

    @property
    def is_vararg(self) -> bool:
        return bool(self._parts()["is_vararg"])

    @property
    def is_varret(self) -> bool:
        return bool(self._parts()["is_varret"])

    @property
    def is_mutable(self) -> bool:
        """Some argument is written (`Tensor(a!)`)."""
        return any(a.is_write for a in self.arguments)


Tag = enum.Enum("Tag", [(t, t) for t in _C._known_tags()], type=str,  # type: ignore[misc]
                module=__name__)
Tag.__doc__ = "The op tags opreg accepts (torch's tags.yaml names); members are str."


def tag_name(tag: Any) -> str:
    """The name of a tag given as opreg.Tag, torch.Tag or str."""
    if isinstance(tag, enum.Enum):
        return str(tag.value)
    name = getattr(tag, "name", None)  # torch.Tag (a pybind11 enum)
    if isinstance(name, str) and not isinstance(tag, str):
        return name
    return str(tag)


def tags_of(tags: Any) -> Tuple[str, ...]:
    """Names of one tag or a sequence of tags."""
    if isinstance(tags, (str, enum.Enum)) or hasattr(tags, "name"):
        return (tag_name(tags),)
    return tuple(tag_name(t) for t in tags)
