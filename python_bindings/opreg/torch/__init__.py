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
  OPREG_TORCH_PYTHON_KERNELS=1 in the environment, get a kernel on torch's Python-kernel path
  that is a C callable (no Python frame) passing torch tensors through torch's C DLPack exchange
  API; `python_kernels()` lists them with the reason.
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

An op given a Python CompositeImplicit kernel through `opreg.Library.impl` (one not annotated
with opreg types) is a CompositeImplicitAutograd op in torch, as with torch.library: torch calls
that function with torch values, so calls decompose into the ops it calls (gradients flow
through them; meta tensors, FakeTensor tracing and torch.compile go through it, with no fake),
and the op keeps opreg's kernels only for the backends where opreg has a kernel of its own.
The op's torch kernels follow as such a kernel is registered or its Library destroyed, piece by
piece (a backend kernel serving calls on another thread is left in place). As with torch.library,
gradients flow through the torch ops such a kernel calls; `opreg.ops` calls on torch tensors run
outside torch's autograd, so a composite kernel written with them gives its inputs no gradient.

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
and listed in `skipped()` with the reason. This package needs torch; opreg itself does not.

The package, by concern: `_records` (one record per torch op, the only torch-side state, and
its lock), `_registration` (defining and undoing torch ops, following the op event stream),
`_kernel_set` (which kernels and fake an op has, kept in step with the opreg op), `_kernels`
(backend kernels, version bumps), `_fakes`, `_aliasing` (ops returning their
written arguments), `_autograd` (register_autograd), `_math_bits` (the Negative key).
"""
from __future__ import annotations

import atexit
from typing import Any, Callable, Dict, List, Optional

import torch

from .. import _C, _op_events
from . import _autograd
from ._records import RECORDS
from ._registration import on_op_event, register_or_skip

__all__ = ["python_kernels", "register_autograd", "register_fake", "registered", "skipped", "sync",
           "to_torch_op"]


def sync() -> List[str]:
    """Registers with torch every opreg op not registered yet; returns their names."""
    with RECORDS.lock:
        before = set(RECORDS.registered())
        for qualified in _C.list_ops():
            register_or_skip(qualified)
        return sorted(set(RECORDS.registered()) - before)


def registered() -> List[str]:
    """The opreg ops that are torch ops, as "ns::name" or "ns::name.overload"."""
    with RECORDS.lock:
        return RECORDS.registered()


def skipped() -> Dict[str, str]:
    """Ops left alone, with why (a name torch already has, a schema torch refuses); "<op> (fake)"
    for an op torch took no fake for (it runs eagerly only)."""
    with RECORDS.lock:
        return RECORDS.skipped()


def python_kernels() -> Dict[str, str]:
    """Torch ops whose CPU/CUDA kernel torch calls through its Python-kernel path (a C callable
    of opreg._C: no Python frame) rather than opreg's C++ entry point, with why (an argument
    type the C++ bridge does not carry, torch older than 2.11); every other registered op's
    backend kernel is that C++ entry point."""
    with RECORDS.lock:
        return RECORDS.python_kernels()


def to_torch_op(op: Any) -> Any:
    """The torch OpOverload of an opreg op (OpOverload, OpPacket, an opreg.custom_op's
    CustomOpDef, "ns::name[.overload]", or that torch OpOverload itself, as torch.library's
    functions take one)."""
    name = getattr(op, "name", None)
    if isinstance(op, (_C.OpOverload, _C.OpPacket)) or (
            not isinstance(op, str) and name in _op_events.CUSTOM_OPS):  # a CustomOpDef
        qualified = name
    elif isinstance(op, torch._ops.OpOverload):
        qualified = _qualified_of(op)
    else:
        qualified = str(op)
    if "::" not in qualified:
        error = ValueError if isinstance(op, str) else TypeError
        raise error(f"expected an opreg op (an OpOverload, OpPacket, CustomOpDef, "
                    f"'ns::name[.overload]' or its torch OpOverload), got {op!r}")
    with RECORDS.lock:
        register_or_skip(qualified)
        torch_op = RECORDS.torch_op(qualified)
        if torch_op is None:
            why = RECORDS.skipped_reason(qualified) or "not an opreg op"
            raise RuntimeError(f"{qualified} is not a torch op: {why}")
        return torch_op


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
    qualified = _qualified_of(to_torch_op(op))

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        with RECORDS.lock:
            record = RECORDS.get(qualified)
            if record is None or record.torch_op is None:
                raise RuntimeError(f"{qualified} is not a torch op (any more)")
            target = RECORDS.get(record.companion) if record.companion else record
            if target is None or target.fake_refused:
                why = target.fake_refused if target is not None else "no companion op"
                raise RuntimeError(f"[{qualified}] torch took no fake for this op: {why}")
            if target is record:
                record.torch_fake = f
            else:
                def returning_nothing(*args: Any, **kwargs: Any) -> None:
                    f(*args, **kwargs)

                target.torch_fake = returning_nothing
        return f

    return register if func is None else register(func)


def register_autograd(op: Any, backward: Callable[..., Any], *,
                      setup_context: Optional[Callable[..., Any]] = None) -> None:
    """torch.library.register_autograd for an opreg op: gradients flow through its torch op.

    backward(ctx, *grads) returns one gradient per input (None for non-tensors);
    setup_context(ctx, inputs, output) saves what backward needs."""
    _autograd.register_autograd(_qualified_of(to_torch_op(op)), backward, setup_context)


# opreg.custom_op calls through the torch op when given torch tensors: it asks the records.
_op_events.set_torch_op_lookup(RECORDS.torch_op)
# Every op defined now (the subscription's replay) and from now on, each once.
_subscription = _op_events.subscribe(on_op_event, replay=True)
atexit.register(_op_events.close_stream)
