"""opreg ops as torch ops.

    import opreg.torch
    y = torch.ops.opreg.rms_norm(x, w, 1e-6)            # torch.Tensor in, torch.Tensor out
    torch.compile(f, fullgraph=True)                    # sees them as ordinary custom ops

Importing this module registers every op opreg knows (built-in, loaded from a C++ library,
defined from Python) with torch's dispatcher as `torch.ops.<ns>.<name>.<overload>`, with its
schema (opreg prints schemas exactly as torch does), and keeps doing so for ops defined later
through `opreg.Library` / `opreg.custom_op` or by C++ code: a kernel library (TORCH_LIBRARY
sources built on opreg::torch_compat included) loaded with `opreg.load_library`,
`torch.ops.load_library`, ctypes or as an extension module has its ops in torch.ops by the
time the call or import returns. (C++ definitions reach Python through the interpreter's main
thread: ops a library defines while loading on another thread appear once the main thread
runs Python code again; `sync()` registers them at once.) An op without tensor
arguments gets a CompositeExplicitAutograd kernel (torch has no backend to dispatch it on).
Each torch op gets:

- CPU and CUDA kernels that call the opreg op zero-copy, CUDA work on torch's current stream.
  With torch 2.11 or later the kernel is opreg's C++ entry point registered through torch's
  stable C ABI (`aoti_torch_library_impl`, `torch_from_blob`), for ops whose arguments are
  Tensor, int, SymInt, float, bool, ScalarType or their optionals: torch's dispatcher reaches
  it with no Python frame in any mode, for `-> ()` ops, ops with returns and ops whose returns
  are their mutated arguments (`foo_`, `foo.out`: their Python decomposition onto a `-> ()`
  companion op, which torch's functionalization needs, serves only tracing). Other ops (a
  `Scalar`, `str` or list argument), and every op on older torch or with
  OPREG_TORCH_PYTHON_KERNELS=1 in the environment, get a Python kernel that passes torch
  tensors through torch's C DLPack exchange API; `python_kernels()` lists them with the reason.
  Errors name the op and argument either way; through the C++ kernel torch raises them as
  RuntimeError;
- a fake implementation derived from the op's opreg Meta kernel, so FakeTensor tracing (and
  so `torch.compile`, with any backend) needs no hand-written shape function. An op whose
  returns are all arguments (`-> ()`, as vLLM's kernels are) needs no Meta kernel, and its
  dynamic sizes stay dynamic; an op that returns new tensors has its sizes specialised to each
  example traced (opreg's Meta kernels compute concrete shapes), so dynamic sizes recompile,
  except for the built-in ops, which have symbolic shape rules, and unless
  `register_fake(op, func)` gives the op a torch-level fake (FakeTensors in, symbolic
  sizes kept), as vLLM's Python wrappers do for its kernels;
- mutation and aliasing from the schema: `Tensor(a!)` arguments are mutated in place and an
  out variant returns the very `out` tensor it was given, as torch requires.

Every op that writes an argument (`Tensor(a!)`: in-place, out variants, `-> ()` kernels)
bumps the version counters of the tensors it writes, as torch's own in-place ops do, so autograd
refuses a backward that would read a tensor the op overwrote. The C++ kernel does it through
libtorch's `torch::autograd::impl::bump_version`, a C++ symbol outside the stable ABI looked up
by name; a torch without it gets a Python ADInplaceOrView kernel instead (a Python frame per
call). An inference tensor written outside inference_mode is refused before the op runs, as
torch refuses it. An op made with `opreg.custom_op` is called through its torch op when given
torch tensors.

An op defined again with another schema (its Library destroyed, then defined anew: a pytest
fixture, a module reloaded) is redefined in torch too, its old torch registrations undone. A
torch op object taken before must be looked up again (torch parses its arguments with the old
schema: calling it can crash, as after a torch.library redefinition).

`register_autograd(op, backward, setup_context=...)` takes torch.library's signature (a
Python autograd kernel: it puts a Python frame on the op's call path in grad mode and no_grad).
An op without one has no autograd kernel at all, as a native TORCH_LIBRARY op without one:
torch's C++ autograd fallback runs, and a backward that reaches the op warns ("an autograd
kernel was not registered to the Autograd key(s)") and gives its inputs no gradient.

Ops whose names torch already has (torch's own `symm_mem` namespace, for one) are left alone
and listed in `skipped()` with the reason. This module needs torch; opreg itself does not.
"""
from __future__ import annotations

import atexit
import os
import threading
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from . import _C, _op_events
from . import _torch_math_bits as _math_bits
from ._torch_fake_kernels import make_fake as _make_fake
from ._torch_fake_kernels import torch_fakes as _torch_fakes
from ._op_events import TORCH_OPS as _registered

__all__ = ["python_kernels", "register_autograd", "register_fake", "registered", "skipped", "sync",
           "to_torch_op"]


class _Lock:
    """The module's reentrant lock. The op event follower runs at any bytecode boundary of the
    main thread, so also inside the module's own registration code: there it leaves the names
    here (defer), and the thread registers them as it releases the lock."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._owner: Optional[int] = None
        self._depth = 0
        self._deferred: List[str] = []

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
            _on_op_event("defined", qualified)

    def held_here(self) -> bool:
        return self._owner == threading.get_ident()

    def defer(self, names: List[str]) -> None:
        """Called by the thread holding the lock."""
        self._deferred.extend(names)


_lock = _Lock()
# Per op ("ns::name[.overload]"): the torch Libraries holding its definition, kernels and fake,
# its companion op's too (_register_aliasing), destroyed together when the opreg op is redefined
# with another schema; and the schema it was registered with.
_op_libs: Dict[str, List[torch.library.Library]] = {}
_schemas: Dict[str, str] = {}
_companions: Dict[str, str] = {}  # op -> its companion op, "opreg_mut::..."
# Per op: the Library holding the autograd kernel register_autograd gave it (a later call
# replaces it). An op without one has no autograd kernel: torch's C++ fallback runs instead.
_autograd_libs: Dict[str, torch.library.Library] = {}
_skipped: Dict[str, str] = {}  # "ns::name.overload" -> why


def _overload_of(qualified: str) -> Any:
    """The opreg OpOverload of "ns::name" or "ns::name.overload"."""
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    return getattr(_C.OpPacket(f"{ns}::{name}"), overload or "default")


def _library(owner: str, ns: str) -> torch.library.Library:
    """A new torch Library in `ns` for registrations of op `owner`, undone with it."""
    lib = torch.library.Library(ns, "FRAGMENT")
    _op_libs.setdefault(owner, []).append(lib)
    return lib


def _torch_has(qualified: str) -> bool:
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    try:
        torch._C._dispatch_find_schema_or_throw(f"{ns}::{name}", overload)
        return True
    except RuntimeError:
        return False


def _aliased_returns(schema: Any) -> List[Optional[int]]:
    """For each return, the index of the argument it is (a `Tensor(a!)` return), else None."""
    out: List[Optional[int]] = []
    for ret in schema.returns:
        found = None
        if ret.alias_info is not None and ret.alias_info.is_write:
            for i, arg in enumerate(schema.arguments):
                if arg.alias_info is not None and arg.alias_info.before_set == ret.alias_info.before_set:
                    found = i
                    break
        out.append(found)
    return out


def _argument(schema: Any, index: int, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    if index < len(args):
        return args[index]
    return kwargs[schema.arguments[index].name]


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
                   kwargs: Dict[str, Any]) -> None:
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


def _make_kernel(opreg_op: Any, schema: Any) -> Callable[..., Any]:
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


def _tags(opreg_op: Any) -> Tuple[Any, ...]:
    out = []
    for t in opreg_op.tags:
        tag = getattr(torch.Tag, t, None)
        if tag is not None:
            out.append(tag)
    return tuple(out)


def _init_c_bridge() -> str:
    """Loads torch's stable C ABI for C++ kernels; '' on success, else why not."""
    if os.environ.get("OPREG_TORCH_PYTHON_KERNELS") == "1":
        return "OPREG_TORCH_PYTHON_KERNELS=1"
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    return _C._torch_bridge_init(path, torch.Tensor)


# Why torch ops get Python kernels instead of C++ ones ('' when they get C++ ones).
_c_bridge_unavailable = _init_c_bridge()
# Whether the C++ kernels bump the version counters of written tensors themselves.
_c_bridge_bumps = not _c_bridge_unavailable and _C._torch_bridge_bumps_versions()
_python_kernels: Dict[str, str] = {}  # "ns::name.overload" -> why its kernel is Python


def _has_tensor_arguments(schema: Any) -> bool:
    return any("Tensor" in str(a.type) for a in schema.arguments)


def _register_kernels(qualified: str, opreg_op: Any, schema: Any, lib: torch.library.Library,
                      target: str, owner: str) -> None:
    # The C++ kernel (torch's dispatcher calls opreg directly) where the bridge carries the
    # op's argument types; a Python kernel otherwise.
    # An op without tensor arguments gives torch no backend to dispatch on: its kernel is
    # CompositeExplicitAutograd (what a libtorch `m.def("name", &fn)` amounts to).
    keys = ["CPU", "CUDA"] if _has_tensor_arguments(schema) else ["CompositeExplicitAutograd"]
    why = _c_bridge_unavailable or _C._torch_bridge_impl(
        opreg_op.name, qualified.split("::", 1)[0], target, keys, owner)
    if why:
        _python_kernels[qualified] = why
        kernel = _make_kernel(opreg_op, schema)
        for key in keys:
            lib.impl(target, kernel, key)
    _register_beside_cpp_kernel(qualified, schema, lib, target, cpp_kernel=not why)
    fake = _make_fake(opreg_op, schema, qualified)
    try:
        torch.library.register_fake(qualified, fake, lib=lib)
    except RuntimeError as e:  # an op torch cannot fake (no tensor inputs, say): eager only
        _skipped[qualified + " (fake)"] = str(e)


def _register_beside_cpp_kernel(qualified: str, schema: Any, lib: torch.library.Library,
                                target: str, cpp_kernel: bool) -> None:
    """What an op's backend kernel needs around it: a Negative-key kernel, and where a C++
    kernel (`cpp_kernel`) cannot bump versions itself, the Python ADInplaceOrView kernel."""
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")

    def torch_op() -> Any:  # exists once registration is done
        return getattr(getattr(getattr(torch.ops, ns), name), overload or "default")

    _math_bits.register_negative_kernel(schema, lib, target, torch_op)
    if cpp_kernel and not _c_bridge_bumps:
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


# Companion ops of ops that return their mutated arguments (out variants, `foo_` returning
# `Tensor(a!)`): torch's functionalization only handles mutable custom ops whose returns carry
# no alias annotation, so the op itself becomes a CompositeImplicitAutograd decomposition that
# calls the companion (same arguments, `-> ()`) and returns those arguments.
_COMPANION_NS = "opreg_mut"


def _register_aliasing(qualified: str, opreg_op: Any, text: str, schema: Any,
                       lib: torch.library.Library, target: str) -> None:
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    companion = f"{ns}__{name}__{overload or 'default'}"
    arguments = text.split("::", 1)[1][len(rest):].rsplit(" -> ", 1)[0]
    clib = _library(qualified, _COMPANION_NS)
    clib.define(f"{companion}{arguments} -> ()")
    companion_qualified = f"{_COMPANION_NS}::{companion}"
    companion_schema = torch._C.parse_schema(f"{companion_qualified}{arguments} -> ()")
    _companions[qualified] = companion_qualified
    _register_kernels(companion_qualified, opreg_op, companion_schema, clib, companion, qualified)
    companion_op = getattr(getattr(torch.ops, _COMPANION_NS), companion).default
    aliased = _aliased_returns(schema)
    single = len(schema.returns) == 1

    def decomposition(*args: Any, **kwargs: Any) -> Any:
        companion_op(*args, **kwargs)
        results = tuple(_argument(schema, i, args, kwargs) for i in aliased)
        return results[0] if single else results

    lib.impl(target, decomposition, "CompositeImplicitAutograd")
    # Eager calls need no decomposition: with a kernel of its own at CPU/CUDA (which torch
    # prefers to a CompositeImplicitAutograd one there, and then at the Autograd keys too) the
    # op reaches the C++ kernel with no Python frame; it returns the caller's tensors and bumps
    # their versions. Tracing (FakeTensor, functionalization) still decomposes. The kernel
    # shares the companion's trampoline (same owner, same opreg op).
    if not _c_bridge_unavailable and _has_tensor_arguments(schema) and not _C._torch_bridge_impl(
            opreg_op.name, ns, target, ["CPU", "CUDA"], qualified):
        _register_beside_cpp_kernel(qualified, schema, lib, target, cpp_kernel=True)


def _unregister(qualified: str) -> None:
    """Undoes every torch registration of an op (opreg.torch's and register_autograd's)."""
    companion = _companions.pop(qualified, None)
    for lib in _op_libs.pop(qualified, []):
        lib._destroy()
    formula = _autograd_libs.pop(qualified, None)
    if formula is not None:
        formula._destroy()
    if not _c_bridge_unavailable and not _C._torch_bridge_release(qualified):
        warnings.warn(f"{qualified} was redefined, and this torch cannot delete its old C++ "
                      f"kernels: the new ones override them")
    for name in (qualified, companion):
        for table in (_registered, _schemas, _python_kernels, _torch_fakes):
            table.pop(name, None)
        _skipped.pop(f"{name} (fake)", None)


def _register(qualified: str) -> None:
    if qualified in _registered:
        try:
            text = _overload_of(qualified).schema
        except AttributeError:  # no longer defined: its torch op stays, and says so when called
            return
        if _schemas.get(qualified) == text:
            return
        _unregister(qualified)  # redefined with another schema: the torch op follows it
    elif qualified in _skipped:
        return
    if _torch_has(qualified):
        _skipped[qualified] = "torch already has an op of this name"
        return
    opreg_op = _overload_of(qualified)
    text = opreg_op.schema
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    lib = _library(qualified, ns)
    try:
        lib.define(text.split("::", 1)[1], tags=_tags(opreg_op))
    except RuntimeError as e:
        _skipped[qualified] = f"torch refused the schema: {e}"
        return
    schema = torch._C.parse_schema(text)
    target = f"{name}.{overload}" if overload else name
    if any(i is not None for i in _aliased_returns(schema)):
        _register_aliasing(qualified, opreg_op, text, schema, lib, target)
    else:
        _register_kernels(qualified, opreg_op, schema, lib, target, qualified)
    _registered[qualified] = getattr(getattr(getattr(torch.ops, ns), name), overload or "default")
    _schemas[qualified] = text


def _register_or_skip(qualified: str) -> None:
    """_register, with a failure recorded in skipped() rather than raised: one op torch cannot
    take never keeps the others out."""
    try:
        _register(qualified)
    except BaseException as e:
        if qualified not in _registered:
            _unregister(qualified)  # no half-made torch op left to block a later attempt
        if not isinstance(e, Exception):
            raise  # an interrupt: the op stays unregistered, a later sync() or define retries
        _skipped.setdefault(qualified, f"{type(e).__name__}: {e}")


def sync() -> List[str]:
    """Registers with torch every opreg op not registered yet; returns their names."""
    with _lock:
        before = set(_registered)
        for qualified in _C.list_ops():
            _register_or_skip(qualified)
        return sorted(set(_registered) - before)


def registered() -> List[str]:
    """The opreg ops that are torch ops, as "ns::name" or "ns::name.overload"."""
    return sorted(_registered)


def skipped() -> Dict[str, str]:
    """Ops left alone, with why (a name torch already has, a schema torch refuses)."""
    return dict(_skipped)


def python_kernels() -> Dict[str, str]:
    """Torch ops whose CPU/CUDA kernel is a Python function calling opreg rather than opreg's C++
    entry point, with why (an argument type the C++ bridge does not carry, torch older than
    2.11); every other registered op's backend kernel is that C++ entry point."""
    return dict(_python_kernels)


def to_torch_op(op: Any) -> Any:
    """The torch OpOverload of an opreg op (OpOverload, OpPacket or "ns::name[.overload]")."""
    qualified = op.name if isinstance(op, (_C.OpOverload, _C.OpPacket)) else str(op)
    with _lock:
        _register_or_skip(qualified)
    if qualified not in _registered:
        raise RuntimeError(f"{qualified} is not a torch op: {_skipped.get(qualified, 'not an opreg op')}")
    return _registered[qualified]


def _qualified_of(torch_op: Any) -> str:
    """"ns::name" or "ns::name.overload" of a torch OpOverload."""
    overload = torch_op._overloadname
    return torch_op._schema.name + (f".{overload}" if overload != "default" else "")


def register_fake(op: Any, func: Optional[Callable[..., Any]] = None, /) -> Any:
    """A fake for an opreg op's torch op, as torch.library.register_fake's (the meaning
    register_fake has everywhere in opreg): `func` gets torch FakeTensors, whose sizes stay
    symbolic under dynamic shapes, and returns torch tensors. Unlike opreg.library.register_fake
    it leaves the op's opreg Meta kernel alone (a C++ library's own Meta kernel keeps serving
    opreg's calls). It replaces the fake derived from the op's Meta kernel, which specialises
    the sizes of ops that return new tensors (each new batch size compiles again, and a size
    marked with torch._dynamo.mark_dynamic is refused). A decorator without `func`.

    An op that returns nothing (`-> ()`) needs none (its own fake keeps sizes symbolic); one
    given replaces the Meta kernel's checks while tracing. So does one given to an op whose
    returns are its mutated arguments (it traces through a `-> ()` companion op, whose fake
    calls `func` and returns nothing).

    Raises RuntimeError when the op is not a torch op (as to_torch_op), or when torch took no
    fake for it (skipped() says why)."""
    torch_op = to_torch_op(op)
    qualified = _qualified_of(torch_op)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        with _lock:
            companion = _companions.get(qualified)
            refused = _skipped.get(f"{companion or qualified} (fake)")
            if refused is not None:
                raise RuntimeError(f"[{qualified}] torch took no fake for this op: {refused}")
            if companion is None:
                _torch_fakes[qualified] = f
            else:
                def returning_nothing(*args: Any, **kwargs: Any) -> None:
                    f(*args, **kwargs)

                _torch_fakes[companion] = returning_nothing
        return f

    return register if func is None else register(func)


def register_autograd(op: Any, backward: Callable[..., Any], *,
                      setup_context: Optional[Callable[..., Any]] = None) -> None:
    """torch.library.register_autograd for an opreg op: gradients flow through its torch op.

    backward(ctx, *grads) returns one gradient per input (None for non-tensors);
    setup_context(ctx, inputs, output) saves what backward needs."""
    torch_op = to_torch_op(op)
    qualified = _qualified_of(torch_op)
    with _lock:
        previous = _autograd_libs.pop(qualified, None)
        if previous is not None:
            previous._destroy()
        lib = torch.library.Library(qualified.split("::", 1)[0], "FRAGMENT")
        torch.library.register_autograd(torch_op, backward, setup_context=setup_context, lib=lib)
        _autograd_libs[qualified] = lib  # a later register_autograd replaces it again


def _on_op_event(kind: str, qualified: str) -> None:
    """The op event stream's follower (_op_events): an op defined by any code becomes a torch
    op, and a name skipped before (its schema refused, torch's op of that name since gone) is
    tried again. The stream is handed over at any bytecode boundary of the main thread, so also
    inside this module's own registration code: there the name waits for the lock's release.
    An undefined op's torch op stays (and says so when called)."""
    if kind != "defined":
        return
    if _lock.held_here():
        _lock.defer([qualified])
        return
    with _lock:
        try:
            _overload_of(qualified)
        except AttributeError:
            return  # undefined again since
        _skipped.pop(qualified, None)
        _register_or_skip(qualified)


# Every op defined now (the subscription's replay) and from now on, each once.
_subscription = _op_events.subscribe(_on_op_event, replay=True)
atexit.register(_op_events.close_stream)
