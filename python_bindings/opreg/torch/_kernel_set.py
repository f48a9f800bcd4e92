"""Which kernels a torch op of opreg's has, kept in step with the opreg op (`sync_kernels`).

Each piece sits in a torch Library of its own, so that one can come or go without touching the
others (a call running on a backend kernel another thread leaves in place is never pulled from
under it):
- "composite": the op's CompositeImplicitAutograd kernel when opreg.Library.impl gave it a Python
  CompositeImplicit kernel written for torch values (`_op_events.COMPOSITES`): torch decomposes
  the op into the ops that kernel calls, as a torch.library op with one;
- "decomposition": otherwise, for an op whose returns are its written arguments, opreg.torch's
  own CompositeImplicitAutograd kernel (_aliasing);
- a backend kernel per key, only for the keys where opreg has a kernel of its own when the op is
  composite (torch, as opreg, prefers a backend's kernel to the composite one), else for CPU and
  CUDA: the C++ bridge (its IMPL libraries kept by _C for the spec's owner) or, where the bridge
  cannot carry the op's arguments, a "python:<key>" piece (_kernels.python_kernel);
- "beside": the Negative-key kernel and, on a torch without bump_version, the version bumps;
- "fake": the op's fake (_fakes), not for a composite op (torch refuses one there) nor for an op
  with a decomposition (its companion has it).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

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
    entries = _op_events.COMPOSITES.get(qualified)
    if not entries or not entries[-1][1]:  # none, or opreg's newest is written for opreg values
        return False, keys
    return True, tuple(k for k in keys if _C._kernel_origin(
        opreg_op.name, "CPU" if k == "CompositeExplicitAutograd" else k) != "composite_implicit")


def _composite_kernel(qualified: str, opreg_op: Any) -> Callable[..., Any]:
    """The "composite" piece: the newest Python CompositeImplicit kernel opreg.Library.impl took
    for the op, called with torch's values as torch calls one (the tensors torch was given: real,
    fake or functional ones, so tracing and autograd go through the ops it calls), looked up at
    each call as opreg's dispatcher does. Between a change of the op's kernels and this op's
    refresh (a Library collected on another thread is followed on the main thread) it calls the
    opreg op, which runs what opreg runs now."""

    def composite(*args: Any, **kwargs: Any) -> Any:
        entries = _op_events.COMPOSITES.get(qualified)
        if not entries or not entries[-1][1]:
            return opreg_op(*args, **kwargs)
        result = entries[-1][0](*args, **kwargs)
        if torch.is_grad_enabled():
            _warn_if_detached(qualified, args, kwargs, result)
        return result

    composite.__name__ = f"opreg_composite_{qualified.replace('::', '_').replace('.', '_')}"
    return composite


def _tensors(value: Any) -> List[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


def _warn_if_detached(qualified: str, args: Any, kwargs: Any, result: Any) -> None:
    """Says so when a composite kernel given inputs that require grad returns a floating-point
    tensor that does not: the ops it called ran outside torch's autograd (opreg.ops on torch
    tensors does, as NumPy would), so the op gives those inputs no gradient. torch's autograd
    fallback warns where a backward reaches an op without a formula; this is that warning for
    a composite kernel, which torch does not watch."""
    if not any(t.requires_grad for t in _tensors(args) + _tensors(list(kwargs.values()))):
        return
    if any(not t.requires_grad and (t.is_floating_point() or t.is_complex())
           for t in _tensors(result)):
        warnings.warn(f"[{qualified}] its CompositeImplicit kernel returned a tensor that does "
                      f"not require grad from inputs that do: the ops it calls ran outside "
                      f"torch's autograd (as opreg.ops calls do), so the op gives its inputs no "
                      f"gradient; call torch ops (torch.ops.<ns>.<op> with an autograd formula) "
                      f"there")


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
    why = _kernels.C_BRIDGE_UNAVAILABLE or _C._torch_bridge_impl(
        opreg_op.name, record.qualified.split("::", 1)[0], spec.target, [key], spec.owner)
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
    composite, keys = wanted_state(record.qualified, opreg_op, spec.schema)
    if composite:
        for name in ("decomposition", "fake"):
            _drop_piece(record, name)
        if "composite" not in record.pieces:
            _new_piece(record, "composite").impl(
                spec.target, _composite_kernel(record.qualified, opreg_op),
                "CompositeImplicitAutograd")
    else:
        _drop_piece(record, "composite")
        if spec.decomposition is not None and "decomposition" not in record.pieces:
            _new_piece(record, "decomposition").impl(spec.target, spec.decomposition,
                                                     "CompositeImplicitAutograd")
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
    if composite:
        record.fake_refused = _COMPOSITE_FAKE
    elif spec.decomposition is None and "fake" not in record.pieces:
        record.fake_refused = ""
        try:
            torch.library.register_fake(record.qualified, make_fake(opreg_op, spec.schema, record),
                                        lib=_new_piece(record, "fake"))
        except RuntimeError as e:  # an op torch cannot fake (no tensor inputs, say): eager only
            _drop_piece(record, "fake")
            record.fake_refused = str(e)


def release(record: TorchOpRecord) -> bool:
    """Undoes every piece of an op being unregistered; False where this torch cannot delete its
    C++ kernels (they stay, and new ones override them)."""
    for name in list(record.pieces):
        _drop_piece(record, name)
    record.backend_kernels.clear()
    return record.spec is None or _kernels.release_cpp_kernels(record.spec.owner,
                                                               record.spec.target)
