"""What opreg's Python modules tell the parts that follow ops (opreg.torch), and the tables they
share, so that no module reaches into another's private names or imports it back.

- `defined(name)`: an op was defined from Python (opreg.Library.define); `loaded()`: a kernel
  library was loaded (its C++ blocks may have defined ops). Followers subscribe with
  `on_defined` / `on_loaded`; an event with no follower does nothing. Followers run on the
  calling thread, in subscription order; one that raises propagates to the caller.
- `FAKES`: "ns::name[.overload]" -> the fake given to register_fake (opreg.library), which
  opreg.torch gives torch as the op's torch-level fake.
- `CUSTOM_OPS`: names of the ops opreg.custom_op defined (opreg.torch gives them torch's
  version-counter semantics); `TORCH_OPS`: "ns::name.overload" -> the torch OpOverload of each op
  opreg.torch has registered (opreg.custom_op calls through it for torch tensors).

This module imports nothing of opreg: every module may import it.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Set

CUSTOM_OPS: Set[str] = set()
FAKES: Dict[str, Callable[..., Any]] = {}
TORCH_OPS: Dict[str, Any] = {}

_on_defined: List[Callable[[str], None]] = []
_on_loaded: List[Callable[[], None]] = []


def on_defined(follower: Callable[[str], None]) -> None:
    """Calls `follower(qualified_name)` after each op defined from Python from now on."""
    _on_defined.append(follower)


def on_loaded(follower: Callable[[], None]) -> None:
    """Calls `follower()` after each kernel library load from now on."""
    _on_loaded.append(follower)


def defined(qualified_name: str) -> None:
    for follower in list(_on_defined):
        follower(qualified_name)


def loaded() -> None:
    for follower in list(_on_loaded):
        follower()
