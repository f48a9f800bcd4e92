"""opreg.load_library: loads a C++ kernel library into this process, as torch.ops.load_library
does for libtorch extensions."""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import List, Set

from . import _C

_lock = threading.Lock()
_loaded: Set[str] = set()


class RegistrationError(RuntimeError):
    """A loaded library's OPREG_LIBRARY / TORCH_LIBRARY blocks had failing def/impl calls. The
    library stays loaded and every call that succeeded stays registered; `errors` lists each
    failure with its file:line."""

    def __init__(self, path: str, errors: List[str]) -> None:
        self.path = path
        self.errors = errors
        lines = "\n".join(f"  {e}" for e in errors)
        super().__init__(f"{path}: {len(errors)} registration error(s) while loading:\n{lines}")


def load_library(path: str | os.PathLike[str]) -> None:
    """Loads the shared library at `path`: a kernel library built against opreg (OPREG_LIBRARY
    blocks) or against `opreg::torch_compat` (unchanged TORCH_LIBRARY sources). Loading runs
    its registration blocks; their ops are then `opreg.ops.<ns>.<op>` and, when `opreg.torch`
    is imported (now or later), `torch.ops.<ns>.<op>`.

    Loading a path twice does nothing the second time. Raises FileNotFoundError for a missing
    file, OSError when the dynamic loader refuses the library (its message names the missing
    symbol or dependency), and RegistrationError when some of its def/impl calls failed.
    """
    real = os.path.realpath(os.fspath(path))
    if not os.path.isfile(real):
        raise FileNotFoundError(f"opreg.load_library: no such library: {os.fspath(path)!r}")
    with _lock:
        if real in _loaded:
            return
        before = len(_C.static_registration_errors())
        try:
            ctypes.CDLL(real)
        except OSError as e:
            raise OSError(f"opreg.load_library: could not load {real}: {e}") from e
        _loaded.add(real)
        errors = _C.static_registration_errors()[before:]
    torch_bridge = sys.modules.get("opreg.torch")
    if torch_bridge is not None:
        torch_bridge.sync()  # type: ignore[attr-defined]
    if errors:
        raise RegistrationError(real, errors)


def loaded_libraries() -> List[str]:
    """The real paths of the libraries load_library has loaded, sorted."""
    with _lock:
        return sorted(_loaded)
