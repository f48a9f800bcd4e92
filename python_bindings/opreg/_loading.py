"""opreg.load_library: loads a C++ kernel library into this process, as torch.ops.load_library
does for libtorch extensions."""
from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import List, Optional, Set

from . import _C, _op_events

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


_ELF_MACHINES = {3: "x86", 8: "mips", 20: "ppc", 21: "ppc64", 22: "s390x", 40: "arm",
                 62: "x86_64", 183: "aarch64", 243: "riscv", 258: "loongarch"}


def _elf_header(path: str) -> Optional[tuple]:
    """(ELF class 1/2, byte order 1/2, e_machine) of the file at `path`, or None if not ELF."""
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    order = "little" if head[5] == 1 else "big"
    return head[4], head[5], int.from_bytes(head[18:20], order)


def _why_not_loadable(path: str) -> Optional[str]:
    """What makes `path` unloadable here when its header says so (glibc's dlopen reports an ELF
    of another architecture as "No such file or directory"), else None."""
    theirs = _elf_header(path)
    if theirs is None:
        return "it is not an ELF shared library"
    ours = _elf_header("/proc/self/exe") or _elf_header(sys.executable)
    if ours is None:
        return None

    def describe(h: tuple) -> str:
        bits = {1: "32-bit", 2: "64-bit"}.get(h[0], f"class {h[0]}")
        return f"{bits} {_ELF_MACHINES.get(h[2], f'e_machine {h[2]}')}"

    if theirs != ours:
        return f"it is built for {describe(theirs)}, and this process runs {describe(ours)}"
    return None


def load_library(path: str | os.PathLike[str]) -> None:
    """Loads the shared library at `path`: a kernel library built against opreg (OPREG_LIBRARY
    blocks) or against `opreg::torch_compat` (unchanged TORCH_LIBRARY sources). Loading runs
    its registration blocks; their ops are then `opreg.ops.<ns>.<op>` and, when `opreg.torch`
    is imported (now or later), `torch.ops.<ns>.<op>`.

    Loading a path twice does nothing the second time. Raises FileNotFoundError for a missing
    file, OSError when the dynamic loader refuses the library (its message names the missing
    symbol or dependency), and RegistrationError when some of its def/impl calls failed.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"opreg.load_library: expected a path (str or os.PathLike), got "
                        f"{type(path).__name__}")
    shown = os.fspath(path)
    if isinstance(shown, str) and "\0" in shown:
        raise ValueError(f"opreg.load_library: the path {shown!r} contains a NUL byte")
    try:
        real = os.path.realpath(shown, strict=True)
    except OSError as e:  # missing, or a loop of symbolic links
        raise FileNotFoundError(f"opreg.load_library: no such library: {shown!r} "
                                f"({e.strerror or e})") from None
    if os.path.isdir(real):
        raise IsADirectoryError(f"opreg.load_library: {shown!r} is a directory, not a library")
    if not os.path.isfile(real):
        # dlopen of a FIFO would block until a writer came; devices are never libraries.
        raise OSError(f"opreg.load_library: {shown!r} is not a regular file (a FIFO, device "
                      f"or socket), so not a library")
    with _lock:
        if real in _loaded:
            return
        before = len(_C.static_registration_errors())
        try:
            ctypes.CDLL(real)
        except OSError as e:
            why = _why_not_loadable(real)
            detail = f"{why} (the dynamic loader said: {e})" if why else str(e)
            raise OSError(f"opreg.load_library: could not load {real}: {detail}") from e
        _loaded.add(real)
        errors = _C.static_registration_errors()[before:]
    _op_events.deliver()  # the library's ops reach the followers (opreg.torch) now
    if errors:
        raise RegistrationError(real, errors)


def loaded_libraries() -> List[str]:
    """The real paths of the libraries load_library has loaded, sorted."""
    with _lock:
        return sorted(_loaded)
