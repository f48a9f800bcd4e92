"""`opreg.ops.<ns>.<op>[.<overload>]`: op packets built lazily from the dispatcher."""
from __future__ import annotations

from types import ModuleType
from typing import Iterator

from . import _C


class _OpNamespace(ModuleType):
    """`opreg.ops.<ns>`: attribute access finds `ns::<name>` and caches its packet."""

    def __init__(self, name: str) -> None:
        super().__init__("opreg.ops." + name)
        self.name = name

    def __getattr__(self, op_name: str) -> _C.OpPacket:
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        qualified = f"{self.name}::{op_name}"
        if not _C._op_exists(qualified):
            raise AttributeError(f"'opreg.ops.{self.name}' has no op '{op_name}' ({qualified} is not defined)")
        packet = _C.OpPacket(qualified)
        # Cached: later lookups are a plain attribute read.
        setattr(self, op_name, packet)
        return packet

    def __iter__(self) -> Iterator[str]:
        prefix = self.name + "::"
        seen = []
        for name in _C.list_ops():
            if name.startswith(prefix):
                base = name[len(prefix):].split(".")[0]
                if base not in seen:
                    seen.append(base)
        return iter(seen)


class _Ops(ModuleType):
    """`opreg.ops`: one namespace object per op namespace, made on first access."""

    def __init__(self) -> None:
        super().__init__("opreg.ops")

    def __getattr__(self, ns: str) -> _OpNamespace:
        if ns.startswith("__"):
            raise AttributeError(ns)
        namespace = _OpNamespace(ns)
        setattr(self, ns, namespace)
        return namespace

    def __iter__(self) -> Iterator[str]:
        return iter(_C._namespaces())


ops = _Ops()
