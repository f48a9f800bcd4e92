"""The CPU/CUDA kernels opreg.torch gives each torch op, and what surrounds them: the C++ entry
point registered through torch's stable C ABI where the bridge carries the op's argument types
(no Python frame on the call path), a Python kernel otherwise; the Negative-key kernel
(_math_bits); the written tensors' version bumps; the op's fake (_fakes).
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Sequence, Tuple

import torch

from .. import _C
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


def _as_torch(value: Any) -> Any:
    if isinstance(value, _C.Tensor):
        return torch.from_dlpack(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_as_torch(v) for v in value)
    return value


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
    """The Python CPU/CUDA kernel: the written tensors' versions bumped (as the C++ kernels do,
    before the call), then the opreg op, zero-copy (results come back as torch tensors)."""
    written = _written_arguments(schema)
    name = opreg_op.name
    if not schema.returns:
        def mutating_kernel(*args: Any, **kwargs: Any) -> None:
            _bump_versions(name, written, args, kwargs)
            opreg_op(*args, **kwargs)
        return mutating_kernel

    def kernel(*args: Any, **kwargs: Any) -> Any:
        _bump_versions(name, written, args, kwargs)
        return _as_torch(opreg_op(*args, **kwargs))
    return kernel


def register_kernels(record: TorchOpRecord, opreg_op: Any, schema: Any,
                     lib: torch.library.Library, target: str, owner: str) -> None:
    """The backend kernels and the fake of torch op `record` (definition `target` in `lib`,
    schema: torch's FunctionSchema), calling `opreg_op`; `owner` is the opreg op whose C++
    trampoline it uses. An op without tensor arguments gives torch no backend to dispatch on:
    its kernel is CompositeExplicitAutograd (what a libtorch `m.def("name", &fn)` amounts to)."""
    keys = ["CPU", "CUDA"] if has_tensor_arguments(schema) else ["CompositeExplicitAutograd"]
    why = C_BRIDGE_UNAVAILABLE or _C._torch_bridge_impl(
        opreg_op.name, record.qualified.split("::", 1)[0], target, keys, owner)
    if why:
        record.python_kernel = why
        kernel = _python_kernel(opreg_op, schema)
        for key in keys:
            lib.impl(target, kernel, key)
    register_beside_cpp_kernel(record.qualified, schema, lib, target, cpp_kernel=not why)
    fake = make_fake(opreg_op, schema, record)
    try:
        torch.library.register_fake(record.qualified, fake, lib=lib)
    except RuntimeError as e:  # an op torch cannot fake (no tensor inputs, say): eager only
        record.fake_refused = str(e)


def register_cpp_kernel(opreg_op: Any, schema: Any, lib: torch.library.Library, target: str,
                        qualified: str) -> bool:
    """Gives an op whose returns are its written arguments the C++ kernel at CPU/CUDA, sharing
    its companion's trampoline (same owner, same opreg op); False where the bridge cannot."""
    if C_BRIDGE_UNAVAILABLE or not has_tensor_arguments(schema) or _C._torch_bridge_impl(
            opreg_op.name, qualified.split("::", 1)[0], target, ["CPU", "CUDA"], qualified):
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
