"""The torch-side state of opreg.torch, owned here and nowhere else: one record per torch op
opreg registered (its companion op, behind an op that returns its written arguments, has its own
record), the names left alone and why, and the lock every change is made under.

Every other module of opreg.torch reads and writes this state through `RECORDS`; no module keeps
a table of its own keyed by op name.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import torch


@dataclass
class TorchOpRecord:
    """What opreg.torch made for one torch op, "ns::name" or "ns::name.overload"."""

    qualified: str
    schema_text: str = ""  # the opreg schema it was registered with
    torch_op: Any = None  # its OpOverload, once registration finished
    # The torch Libraries holding its definition (a companion's go to its owner's list),
    # destroyed with its pieces when the opreg op is redefined with another schema.
    libs: List[torch.library.Library] = field(default_factory=list)
    companion: Optional[str] = None  # "opreg_mut::..." behind an op returning written args
    owner: Optional[str] = None  # a companion's op
    python_kernel: str = ""  # why its CPU/CUDA kernel is on torch's Python-kernel path ('': C++)
    # What its kernels are made of (_kernel_set.KernelSpec), set once it has kernels; the torch
    # Libraries of their pieces, by name ("composite", "fake", ...: _kernel_set); and the keys of
    # its backend kernels, each with why it is on torch's Python-kernel path ('' for the C++ one).
    spec: Any = None
    pieces: Dict[str, torch.library.Library] = field(default_factory=dict)
    backend_kernels: Dict[str, str] = field(default_factory=dict)
    fake_refused: str = ""  # why torch took no fake for it ('' when it took one)
    torch_fake: Optional[Callable[..., Any]] = None  # given to opreg.torch.register_fake
    autograd_lib: Optional[torch.library.Library] = None  # register_autograd's, if any
    # The opreg.custom_op definition (its Library) the op was last registered for, if any: a
    # custom_op defined again under the same schema drops the old one's autograd formula.
    custom_op_lib: Any = None


class _Lock:
    """A reentrant lock that knows its owner. The op event follower runs at any bytecode
    boundary of the main thread, so also inside opreg.torch's own registration code: there it
    leaves the names here (defer), and the thread hands them to `on_release` as it releases the
    lock."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._owner: Optional[int] = None
        self._depth = 0
        self._deferred: List[str] = []
        self.on_release: Callable[[str], None] = lambda qualified: None

    def __enter__(self) -> None:
        self._lock.acquire()
        self._owner = threading.get_ident()
        self._depth += 1

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        deferred: List[str] = []
        if self._depth == 0:
            self._owner = None
            deferred, self._deferred = self._deferred, []
        self._lock.release()
        for qualified in deferred:
            self.on_release(qualified)

    def held_here(self) -> bool:
        return self._owner == threading.get_ident()

    def defer(self, qualified: str) -> None:
        """Called by the thread holding the lock."""
        self._deferred.append(qualified)


class Records:
    """The records and the skipped names; change them with `lock` held."""

    def __init__(self) -> None:
        self.lock = _Lock()
        self._ops: Dict[str, TorchOpRecord] = {}
        self._skipped: Dict[str, str] = {}  # never registered, with why

    def get(self, qualified: str) -> Optional[TorchOpRecord]:
        return self._ops.get(qualified)

    def new(self, qualified: str, **fields: Any) -> TorchOpRecord:
        record = TorchOpRecord(qualified, **fields)
        self._ops[qualified] = record
        return record

    def drop(self, qualified: str) -> Optional[TorchOpRecord]:
        """Forgets the op and its companion; returns the op's record."""
        record = self._ops.pop(qualified, None)
        if record is not None and record.companion is not None:
            self._ops.pop(record.companion, None)
        return record

    def torch_op(self, qualified: str) -> Any:
        """The OpOverload registered for an opreg op, or None."""
        record = self._ops.get(qualified)
        return None if record is None or record.owner is not None else record.torch_op

    def registered(self) -> List[str]:
        return sorted(q for q, r in self._ops.items() if r.owner is None and r.torch_op is not None)

    def python_kernels(self) -> Dict[str, str]:
        return {q: r.python_kernel for q, r in self._ops.items() if r.python_kernel}

    def skip(self, qualified: str, why: str, *, keep_first: bool = False) -> None:
        if not keep_first or qualified not in self._skipped:
            self._skipped[qualified] = why

    def unskip(self, qualified: str) -> None:
        self._skipped.pop(qualified, None)

    def skipped_reason(self, qualified: str) -> Optional[str]:
        return self._skipped.get(qualified)

    def skipped(self) -> Dict[str, str]:
        out = dict(self._skipped)
        out.update({f"{q} (fake)": r.fake_refused for q, r in self._ops.items() if r.fake_refused})
        return out


RECORDS = Records()
