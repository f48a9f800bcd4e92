"""Which kernels a torch op of opreg's has, kept in step with the opreg op (`sync_kernels`).

Each piece sits in a torch Library of its own, so that one can come or go without touching the
others; the pieces a change of the op's composite kernel would otherwise swap choose at each
call instead, so that a call running on another thread never has one pulled from under it:
- "composite": the op's CompositeImplicitAutograd kernel while opreg.Library.impl has given it a
  Python CompositeImplicit kernel written for torch values (`_op_events.torch_composite`): torch
  decomposes the op into the ops that kernel calls, as a torch.library op with one;
- "decomposition": for an op whose returns are its written arguments, its CompositeImplicitAutograd
  kernel for good: that composite kernel when it has one, else opreg.torch's decomposition onto
  its companion op (_aliasing);
- a backend kernel per key: for CPU and CUDA, or for a composite op only the keys where opreg
  runs a kernel of its own (torch, as opreg, prefers a backend's kernel to the composite one):
  the C++ bridge (its IMPL libraries kept by _C for the spec's owner) or, where the bridge
  cannot carry the op's arguments, a "python:<key>" piece (_kernels.python_kernel); adding or
  removing the kernel a backend's calls run on is unsafe while another thread calls the op
  there, as with torch.library;
- "beside": the Negative-key kernel and, on a torch without bump_version, the version bumps;
- "fake": the op's fake (_fakes), registered once before any composite kernel (torch refuses one
  after); it runs the composite kernel while the op has one. An op with a decomposition has
  none (its companion has it).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

import torch

from .. import _C, _op_events
from . import _kernels
from ._fakes import make_fake
from ._records import TorchOpRecord

_COMPOSITE_FAKE = ("its CompositeImplicitAutograd kernel (opreg.Library.impl) decomposes it; "
                   "torch takes no fake for such an op")


@dataclass
class KernelSpec:
    """What a torch op's kernels are made of."""

    opreg_name: str  # the opreg op they call, "ns::name[.overload]"
    schema: Any  # the torch op's FunctionSchema (torch's)
    target: str  # the torch op's name in its namespace, "name[.overload]"
    owner: str  # whose C++ trampoline it uses (an op and its companion share one)
    decomposition: Optional[Callable[..., Any]] = None  # an aliasing op's own composite kernel


def overload_of(qualified: str) -> Any:
    """The opreg OpOverload of "ns::name" or "ns::name.overload" (AttributeError if none)."""
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    return getattr(_C.OpPacket(f"{ns}::{name}"), overload or "default")


def wanted_state(qualified: str, opreg_op: Any, schema: Any) -> Tuple[bool, Tuple[str, ...]]:
    """(whether the op gets the "composite" kernel, the keys of its backend kernels): see the
    module. An op without tensor arguments gives torch no backend to dispatch on: its backend
    kernel is CompositeExplicitAutograd (what a libtorch `m.def("name", &fn)` amounts to)."""
    keys: Tuple[str, ...] = (("CPU", "CUDA") if _kernels.has_tensor_arguments(schema)
                             else ("CompositeExplicitAutograd",))
    if _op_events.torch_composite(qualified) is None:  # none, or the newest takes opreg values
        return False, keys
    # A functional op that opreg runs through its out variant decomposes in torch, which has no
    # out resolution (the composite kernel is the op's own there).
    return True, tuple(k for k in keys if _C._kernel_origin(
        opreg_op.name, "CPU" if k == "CompositeExplicitAutograd" else k)
        not in ("composite_implicit", "out_variant"))


def _composite_or(qualified: str, fallback: Callable[..., Any],
                  returns: bool) -> Callable[..., Any]:
    """A CompositeImplicitAutograd kernel that runs the op's newest Python CompositeImplicit
    kernel when it takes torch values (_op_events.torch_composite), looked up at each call as
    opreg's dispatcher does, else `fallback`. Called with torch's values as torch calls one (the
    tensors torch was given: real, fake or functional ones, so tracing and autograd go through
    the ops it calls). Two pieces use it: "composite", whose fallback is the opreg op (what
    opreg runs between a change of the op's kernels and this op's refresh, as when a Library is
    collected on another thread), and "decomposition", whose fallback is opreg.torch's
    decomposition (a piece that never changes under a call on another thread). A companion op
    (`returns` False) runs its owner's composite kernel for what it writes and returns nothing."""

    def composite(*args: Any, **kwargs: Any) -> Any:
        fn = _op_events.torch_composite(qualified) or fallback
        result = fn(*args, **kwargs)
        return result if returns else None

    composite.__name__ = f"opreg_composite_{qualified.replace('::', '_').replace('.', '_')}"
    return composite


def _new_piece(record: TorchOpRecord, name: str) -> torch.library.Library:
    lib = torch.library.Library(record.qualified.split("::", 1)[0], "FRAGMENT")
    record.pieces[name] = lib
    return lib


def _drop_piece(record: TorchOpRecord, name: str) -> None:
    lib = record.pieces.pop(name, None)
    if lib is not None:
        lib._destroy()


def _add_backend_kernel(record: TorchOpRecord, opreg_op: Any, key: str) -> None:
    spec = record.spec
    why = _kernels.add_cpp_kernel(opreg_op.name, record.qualified.split("::", 1)[0],
                                  spec.target, key, spec.owner)
    if why:
        _new_piece(record, f"python:{key}").impl(
            spec.target, _kernels.python_kernel(opreg_op, spec.schema), key)
    record.backend_kernels[key] = why


def _drop_backend_kernel(record: TorchOpRecord, key: str) -> None:
    if record.backend_kernels[key]:
        _drop_piece(record, f"python:{key}")
    elif not _kernels.release_cpp_kernels(record.spec.owner, record.spec.target, key):
        warnings.warn(f"{record.qualified}: this torch cannot delete the op's C++ kernel for "
                      f"{key}, so it keeps serving there")
        return
    del record.backend_kernels[key]


def sync_kernels(record: TorchOpRecord) -> None:
    """Gives the torch op of `record` (its `spec` set) the pieces the module describes, changing
    only those that differ; an undefined opreg op loses only its "composite" piece (its backend
    kernels say it is undefined when called). Call with RECORDS.lock held."""
    spec = record.spec
    try:
        opreg_op = overload_of(spec.opreg_name)
    except AttributeError:
        _drop_piece(record, "composite")
        return
    # A companion follows its owner's composite kernel: a graph traced before the owner got one
    # calls the companion, which then decomposes as the owner does.
    composite, keys = wanted_state(record.owner or record.qualified, opreg_op, spec.schema)
    aliasing = spec.decomposition is not None
    # The fake and an aliasing op's decomposition are registered once and choose at each call
    # (a change never pulls them from under a call on another thread); the fake first, as torch
    # refuses one for an op with a CompositeImplicitAutograd kernel.
    if not aliasing and "fake" not in record.pieces and (
            not composite or "composite" not in record.pieces):
        try:
            torch.library.register_fake(record.qualified, make_fake(opreg_op, spec.schema, record),
                                        lib=_new_piece(record, "fake"))
            record.fake_refused = ""
        except RuntimeError as e:  # an op torch cannot fake (no tensor inputs, say): eager only
            _drop_piece(record, "fake")
            record.fake_refused = str(e)
    if aliasing and "decomposition" not in record.pieces:
        _new_piece(record, "decomposition").impl(
            spec.target, _composite_or(record.qualified, spec.decomposition, True),
            "CompositeImplicitAutograd")
    if composite and not aliasing and "composite" not in record.pieces:
        _new_piece(record, "composite").impl(
            spec.target, _composite_or(record.owner or record.qualified, opreg_op,
                                       bool(spec.schema.returns)),
            "CompositeImplicitAutograd")
    elif not composite:
        _drop_piece(record, "composite")
    for key in [k for k in record.backend_kernels if k not in keys]:
        _drop_backend_kernel(record, key)
    for key in keys:
        if key not in record.backend_kernels:
            _add_backend_kernel(record, opreg_op, key)
    if record.backend_kernels and "beside" not in record.pieces:
        cpp = any(not why for why in record.backend_kernels.values())
        _kernels.register_beside_cpp_kernel(record.qualified, spec.schema,
                                            _new_piece(record, "beside"), spec.target, cpp)
    record.python_kernel = next((why for why in record.backend_kernels.values() if why), "")
    if "fake" in record.pieces:  # register_fake refuses a composite op's fake, as torch does
        record.fake_refused = _COMPOSITE_FAKE if composite else ""
    elif composite and not aliasing:
        record.fake_refused = _COMPOSITE_FAKE


def release(record: TorchOpRecord) -> bool:
    """Undoes every piece of an op being unregistered; False where this torch cannot delete its
    C++ kernels (they stay, and new ones override them)."""
    for name in list(record.pieces):
        _drop_piece(record, name)
    record.backend_kernels.clear()
    return record.spec is None or _kernels.release_cpp_kernels(record.spec.owner,
                                                               record.spec.target)
