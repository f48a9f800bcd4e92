"""The CPU/CUDA kernels opreg.torch gives each torch op, and what surrounds them: the C++ entry
point registered through torch's stable C ABI where the bridge carries the op's argument types,
a C callable called through torch's Python-kernel path otherwise (a Scalar argument); neither
runs a Python frame on the call path. Around them: the Negative-key kernel
(_math_bits); the written tensors' version bumps; the op's fake (_fakes).
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Sequence, Tuple

import torch

from .. import _C, _op_events
from . import _math_bits
from ._fakes import make_fake
from ._records import TorchOpRecord


def _init_c_bridge() -> str:
    """Loads torch's stable C ABI for C++ kernels; '' on success, else why not."""
    if os.environ.get("OPREG_TORCH_PYTHON_KERNELS") == "1":
        return "OPREG_TORCH_PYTHON_KERNELS=1"
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    return _C._torch_bridge_init(path, torch.Tensor)


# Why torch ops get Python kernels instead of C++ ones ('' when they get C++ ones).
C_BRIDGE_UNAVAILABLE = _init_c_bridge()
# Whether the C++ kernels bump the version counters of written tensors themselves.
C_BRIDGE_BUMPS = not C_BRIDGE_UNAVAILABLE and _C._torch_bridge_bumps_versions()


def has_tensor_arguments(schema: Any) -> bool:
    return any("Tensor" in str(a.type) for a in schema.arguments)


def _written_arguments(schema: Any) -> List[Tuple[int, str]]:
    """(index, name) of each argument the op writes (`Tensor(a!)`)."""
    return [(i, a.name) for i, a in enumerate(schema.arguments)
            if a.alias_info is not None and a.alias_info.is_write]


def _bump_versions(op_name: str, written: List[Tuple[int, str]], args: Sequence[Any],
                   kwargs: Any) -> None:
    """Bumps the version counter of each written tensor, as torch's in-place ops do; refuses an
    inference tensor outside inference_mode, as they do (and as the C++ kernels do)."""
    for i, name in written:
        value = args[i] if i < len(args) else kwargs.get(name)
        tensors = ([value] if isinstance(value, torch.Tensor) else
                   [t for t in value if isinstance(t, torch.Tensor)]
                   if isinstance(value, (list, tuple)) else [])
        if any(t.is_inference() for t in tensors) and not torch.is_inference_mode_enabled():
            raise RuntimeError(
                f"[{op_name}] argument '{name}' (#{i}) was written: Inplace update to inference "
                f"tensor outside InferenceMode is not allowed.You can make a clone to get a "
                f"normal tensor before doing inplace update.")
        if tensors:
            torch.autograd.graph.increment_version(tensors)


def _python_kernel(opreg_op: Any, schema: Any) -> Callable[..., Any]:
    """The kernel torch calls through its Python-kernel path where the C bridge cannot carry the
    op's argument types: a C callable (no Python frame), which bumps the written tensors'
    versions (as the C++ kernels do, before the call), then calls the opreg op, zero-copy
    (results come back as torch tensors)."""
    return _C._TorchPythonKernel(opreg_op, opreg_op.name, _written_arguments(schema),
                                 not schema.returns, torch._C._increment_version,
                                 torch.is_inference_mode_enabled,
                                 torch.from_dlpack, torch.Tensor)


def _origin_key(key: str) -> str:
    return "CPU" if key == "CompositeExplicitAutograd" else key


def wanted_state(qualified: str, opreg_op: Any, schema: Any) -> Tuple[bool, Tuple[str, ...]]:
    """What torch op `qualified` should have: (a CompositeImplicitAutograd kernel, the keys of
    opreg's kernels). An op with a Python CompositeImplicit kernel in COMPOSITES gets the
    former, and opreg's kernels only for the backends where opreg has a kernel of its own (a
    backend kernel, CompositeExplicit, an out variant, a fallback), as torch prefers a backend's
    kernel to the CompositeImplicitAutograd one; an op without one gets opreg's kernels for
    every backend. An op without tensor arguments gives torch no backend to dispatch on: its
    kernel is CompositeExplicitAutograd (what a libtorch `m.def("name", &fn)` amounts to)."""
    keys = ("CPU", "CUDA") if has_tensor_arguments(schema) else ("CompositeExplicitAutograd",)
    if not _op_events.COMPOSITES.get(qualified):
        return False, keys
    return True, tuple(k for k in keys if _C._kernel_origin(opreg_op.name, _origin_key(k))
                       != "composite_implicit")


def _torch_results(value: Any) -> Any:
    """A composite kernel's results as torch values: a NumPy array or an opreg tensor crosses
    by DLPack (outside autograd, as any such result of a torch composite kernel)."""
    if value is None or isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_torch_results(v) for v in value)
    if hasattr(value, "__dlpack__"):
        return torch.from_dlpack(value)
    return value


def _composite_kernel(qualified: str) -> Callable[..., Any]:
    """The op's CompositeImplicitAutograd kernel: the newest Python CompositeImplicit kernel
    opreg.Library.impl took for it, called with torch's values, as torch calls one (the tensors
    torch was given: real, fake or functional ones, so tracing and autograd go through the ops
    it calls). Looked up at each call: a newer one serves at once, as in opreg's dispatcher."""

    def composite(*args: Any, **kwargs: Any) -> Any:
        kernels = _op_events.COMPOSITES.get(qualified)
        if not kernels:  # its Library is being destroyed: torch's kernels follow at once
            raise RuntimeError(f"[{qualified}] its CompositeImplicit kernel was removed")
        return _torch_results(kernels[-1](*args, **kwargs))

    composite.__name__ = f"opreg_composite_{qualified.replace('::', '_').replace('.', '_')}"
    return composite


def register_kernels(record: TorchOpRecord, opreg_op: Any, schema: Any,
                     lib: torch.library.Library, target: str, owner: str) -> None:
    """The kernels and the fake of torch op `record` (definition `target`, schema: torch's
    FunctionSchema) in `lib`, as wanted_state says, calling `opreg_op`; `owner` is the opreg op
    whose C++ trampoline it uses. An op with a CompositeImplicitAutograd kernel gets no fake:
    torch refuses one (the op decomposes into ops that have theirs)."""
    composite, keys = record.kernel_state = wanted_state(record.qualified, opreg_op, schema)
    record.python_kernel = record.fake_refused = ""
    if composite:
        lib.impl(target, _composite_kernel(record.qualified), "CompositeImplicitAutograd")
    if keys:
        why = C_BRIDGE_UNAVAILABLE or _C._torch_bridge_impl(
            opreg_op.name, record.qualified.split("::", 1)[0], target, list(keys), owner)
        if why:
            record.python_kernel = why
            kernel = _python_kernel(opreg_op, schema)
            for key in keys:
                lib.impl(target, kernel, key)
        register_beside_cpp_kernel(record.qualified, schema, lib, target, cpp_kernel=not why)
    if composite:
        record.fake_refused = ("its CompositeImplicitAutograd kernel (opreg.Library.impl) "
                               "decomposes it; torch takes no fake for such an op")
        return
    fake = make_fake(opreg_op, schema, record)
    try:
        torch.library.register_fake(record.qualified, fake, lib=lib)
    except RuntimeError as e:  # an op torch cannot fake (no tensor inputs, say): eager only
        record.fake_refused = str(e)


def register_eager_kernel(opreg_op: Any, schema: Any, lib: torch.library.Library, target: str,
                        qualified: str) -> bool:
    """Gives an op whose returns are its written arguments its own kernel at CPU/CUDA, so that
    eager calls skip its tracing decomposition: the C++ kernel, sharing its companion's trampoline
    (same owner, same opreg op), or where the bridge cannot carry its arguments the C callable of
    _python_kernel. True for the C++ kernel; False otherwise (an op without tensor arguments gets
    neither, and keeps the decomposition)."""
    if not has_tensor_arguments(schema):
        return False
    if C_BRIDGE_UNAVAILABLE or _C._torch_bridge_impl(
            opreg_op.name, qualified.split("::", 1)[0], target, ["CPU", "CUDA"], qualified):
        kernel = _python_kernel(opreg_op, schema)
        for key in ("CPU", "CUDA"):
            lib.impl(target, kernel, key)
        register_beside_cpp_kernel(qualified, schema, lib, target, cpp_kernel=False)
        return False
    register_beside_cpp_kernel(qualified, schema, lib, target, cpp_kernel=True)
    return True


def register_beside_cpp_kernel(qualified: str, schema: Any, lib: torch.library.Library,
                               target: str, cpp_kernel: bool) -> None:
    """What an op's backend kernel needs around it: a Negative-key kernel, and where a C++
    kernel (`cpp_kernel`) cannot bump versions itself, the Python ADInplaceOrView kernel."""
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")

    def torch_op() -> Any:  # exists once registration is done
        return getattr(getattr(getattr(torch.ops, ns), name), overload or "default")

    _math_bits.register_negative_kernel(schema, lib, target, torch_op)
    if cpp_kernel and not C_BRIDGE_BUMPS:
        _register_version_bump(schema, lib, target, torch_op)


def _register_version_bump(schema: Any, lib: torch.library.Library, target: str,
                           torch_op: Callable[[], Any]) -> None:
    """Only where the C++ kernels cannot bump versions (this torch has no bump_version symbol):
    an ADInplaceOrView kernel that bumps the version counter of each tensor the op writes, as
    torch.library.custom_op's ops do, so autograd refuses a backward that would read a tensor
    overwritten since. It costs a Python frame per call. `torch_op()` is the op (it exists once
    registration is done)."""
    written = _written_arguments(schema)
    if not written:
        return

    name = str(schema.name) + (f".{schema.overload_name}" if schema.overload_name else "")

    def ad_inplace_or_view(keyset: Any, *args: Any, **kwargs: Any) -> Any:
        _bump_versions(name, written, args, kwargs)
        with torch._C._AutoDispatchBelowADInplaceOrView():
            return torch_op().redispatch(keyset & torch._C._after_ADInplaceOrView_keyset, *args,
                                         **kwargs)

    lib.impl(target, ad_inplace_or_view, "ADInplaceOrView", with_keyset=True)


def release_cpp_kernels(qualified: str) -> bool:
    """Deletes the C++ kernels' trampolines of an op being unregistered; False where this torch
    cannot delete its registrations (the new ones then override them)."""
    return bool(C_BRIDGE_UNAVAILABLE) or _C._torch_bridge_release(qualified)
