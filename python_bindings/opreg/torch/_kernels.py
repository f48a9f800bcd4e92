"""The CPU/CUDA kernels opreg.torch gives torch ops, and what surrounds them. An op's kernel is
the opreg op called from C++ with no Python frame, through one of two bridges:
- "native" (opreg._torch_native): a boxed kernel written against torch's own C++ API, built with
  the package for one torch and used only with that very torch (version and git commit); it
  carries every argument type, a Scalar included;
- "stable" (opreg._C's `_torch_bridge_*`): torch's stable C ABI, for any torch >= 2.11; it has no
  Scalar, so such ops take torch's Python-kernel path with a C callable (`python_kernel`).
`OPREG_TORCH_BRIDGE=stable` skips the native bridge; `OPREG_TORCH_PYTHON_KERNELS=1` uses neither.
Around the kernels: the Negative-key kernel (_math_bits) and the written tensors' version bumps.
_kernel_set decides which of them an op has.
"""
from __future__ import annotations

import os
from typing import Any, Callable, List, Sequence, Tuple

import torch

from .. import _C
from . import _math_bits


def _native_bridge() -> Tuple[Any, str]:
    """opreg._torch_native when it was built for this very torch, else (None, why not)."""
    if os.environ.get("OPREG_TORCH_BRIDGE") == "stable":
        return None, "OPREG_TORCH_BRIDGE=stable"
    try:
        from .. import _torch_native_build as build
    except ImportError:
        return None, "opreg._torch_native was not built (no torch in the build environment)"
    if (build.TORCH_VERSION, build.TORCH_GIT_VERSION) != (torch.__version__,
                                                          torch.version.git_version):
        return None, (f"opreg._torch_native was built for torch {build.TORCH_VERSION} "
                      f"({build.TORCH_GIT_VERSION}); this is torch {torch.__version__} "
                      f"({torch.version.git_version})")
    from .. import _torch_native
    return _torch_native, ""


def _init_c_bridge() -> Tuple[str, str]:
    """(the bridge, why the other is not used); the bridge is '' when ops get Python kernels."""
    if os.environ.get("OPREG_TORCH_PYTHON_KERNELS") == "1":
        return "", "OPREG_TORCH_PYTHON_KERNELS=1"
    if _NATIVE is not None:
        return "native", ""
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    why = _C._torch_bridge_init(path, torch.Tensor)
    return ("", why) if why else ("stable", NATIVE_UNAVAILABLE)


_NATIVE, NATIVE_UNAVAILABLE = _native_bridge()
# The bridge ops' kernels go through ("native", "stable"), and why not the native one; BRIDGE is
# '' when ops get Python kernels, and C_BRIDGE_UNAVAILABLE then says why.
BRIDGE, _WHY = _init_c_bridge()
C_BRIDGE_UNAVAILABLE = "" if BRIDGE else _WHY
# Whether the C++ kernels bump the version counters of written tensors themselves.
C_BRIDGE_BUMPS = BRIDGE == "native" or (BRIDGE == "stable" and
                                        _C._torch_bridge_bumps_versions())


def add_cpp_kernel(opreg_name: str, torch_ns: str, target: str, key: str, owner: str) -> str:
    """Registers the opreg op as torch op `torch_ns::target`'s kernel for `key` through the
    bridge, kept for `owner`; '' on success, else why the op needs a Python kernel instead."""
    if not BRIDGE:
        return C_BRIDGE_UNAVAILABLE
    if _NATIVE is not None:
        return _NATIVE.impl(opreg_name, torch_ns, target, [key], owner)
    return _C._torch_bridge_impl(opreg_name, torch_ns, target, [key], owner)


def live_results() -> int:
    """How many torch tensors made of opreg results (by the bridge in use) torch holds."""
    return _NATIVE.live_results() if _NATIVE is not None else _C._torch_bridge_live_results()


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


def python_kernel(opreg_op: Any, schema: Any) -> Callable[..., Any]:
    """The kernel torch calls through its Python-kernel path where the C bridge cannot carry the
    op's argument types: a C callable (no Python frame), which bumps the written tensors'
    versions (as the C++ kernels do, before the call), then calls the opreg op, zero-copy
    (results come back as torch tensors)."""
    return _C._TorchPythonKernel(opreg_op, opreg_op.name, _written_arguments(schema),
                                 not schema.returns, torch._C._increment_version,
                                 torch.is_inference_mode_enabled,
                                 torch.from_dlpack, torch.Tensor)


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


def release_cpp_kernels(owner: str, target: str = "", key: str = "") -> bool:
    """Deletes the C++ kernels registered for `owner` (only those of torch op `target` at
    dispatch key `key`, where given); False where this torch cannot delete its registrations
    (they stay, and new ones override them)."""
    if not BRIDGE:
        return True
    if _NATIVE is not None:
        return bool(_NATIVE.release(owner, target, key))
    return bool(_C._torch_bridge_release(owner, target, key))
