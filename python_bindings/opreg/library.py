"""`opreg.library`: torch.library's surface over opreg's C++ Library.

`Library` (torch.library.Library), and the module-level functions a torch.library user reaches
for, with torch's names and arguments: `define`, `impl`, `register_fake`, `register_kernel`,
`register_autograd`, `opcheck`, `custom_op`, `infer_schema`, `Tag`. The module-level functions
register into a FRAGMENT Library per namespace that lives as long as the process (or into
`lib=` when given), as torch.library's do."""
from __future__ import annotations

import importlib
import os
import sys
import threading
import weakref
from types import FrameType
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from . import _C, _fake_adapter, _op_events
from ._annotations import annotated_values, kernel_for
from ._schema_objects import FunctionSchema, Tag, tags_of

_KINDS = ("DEF", "FRAGMENT", "IMPL")


_PKG_DIR = os.path.dirname(os.path.abspath(__file__))


def _caller() -> Tuple[str, int]:
    """File and line of the first frame outside the opreg package (the user's call)."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == _PKG_DIR:
        frame = frame.f_back
    if frame is None:
        return ("<unknown>", 0)
    return (frame.f_code.co_filename, frame.f_lineno)


def _op_name(op: Any) -> str:
    if isinstance(op, (_C.OpOverload, _C.OpPacket)):
        return str(op.name).split("::", 1)[1]
    return str(op)


def _forget_fakes(fakes: list) -> None:
    """Drops the FAKES entries a Library made (those another Library has not replaced since)."""
    for qualified, fn in fakes:
        if _op_events.FAKES.get(qualified) is fn:
            del _op_events.FAKES[qualified]
    fakes.clear()


def _forget_composites(composites: list, kernel_ops: set, *, now: bool) -> None:
    """Drops the COMPOSITES entries a Library made, and tells the followers (`now`: at once)
    about those ops and about the ops with a composite kernel it gave other kernels (which
    backends keep opreg's kernel in torch changes when they go). Called once the Library's
    kernels are gone: the followers look at the kernels as they are when the events reach them,
    which can be at once (a pending call at the next bytecode boundary)."""
    for qualified, fn in composites:
        kept = _op_events.COMPOSITES.get(qualified, [])
        for i, (f, _) in enumerate(kept):
            if f is fn:
                del kept[i]
                break
        if not kept:
            _op_events.COMPOSITES.pop(qualified, None)
    changed = dict.fromkeys(q for q, _ in composites)
    changed.update(dict.fromkeys(q for q in sorted(kernel_ops) if q in _op_events.COMPOSITES))
    for qualified in changed:
        _op_events.composites_changed(qualified, now=now)
    composites.clear()
    kernel_ops.clear()


def _release(lib: Any, fakes: list, composites: list, kernel_ops: set) -> None:
    """A garbage-collected Library's registrations, undone (the followers hear of it at the main
    thread's next bytecode boundary: a finalizer runs inside whatever code collected)."""
    _forget_fakes(fakes)
    _C._Library.destroy(lib)
    _forget_composites(composites, kernel_ops, now=False)


_COMPOSITE_IMPLICIT_KEYS = ("CompositeImplicit", "CompositeImplicitAutograd")


class Library:
    """A set of registrations in one namespace, undone when the Library is destroyed.

    kind: "DEF" (the one block that owns `ns`), "FRAGMENT" (more definitions) or "IMPL"
    (kernels; `dispatch_key` sets their key). Registrations record the caller's file:line.
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = "") -> None:
        if kind not in _KINDS:
            raise ValueError("Unsupported kind: ", kind)
        file, line = _caller()
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._lib: Optional[_C._Library] = _C._Library(ns, kind, dispatch_key, file, line)
        self._op_defs: list[str] = []
        # Fakes given here, (op, fn): their FAKES entries go with the Library.
        self._fakes: list[Tuple[str, Callable[..., Any]]] = []
        # CompositeImplicit kernels given here, (op, fn): their COMPOSITES entries likewise.
        self._composites: list[Tuple[str, Callable[..., Any]]] = []
        # The ops it gave other kernels (their torch kernels may change when those go).
        self._kernel_ops: set[str] = set()
        # Deregisters when the Library is garbage collected.
        self._finalizer = weakref.finalize(self, _release, self._lib, self._fakes,
                                           self._composites, self._kernel_ops)

    def __repr__(self) -> str:
        state = "" if self._lib is not None and self._lib.alive else ", destroyed"
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key}{state})"

    def _c(self) -> _C._Library:
        if self._lib is None:
            raise RuntimeError(f"this opreg.Library('{self.ns}') was destroyed")
        return self._lib

    def define(self, schema: str, alias_analysis: str = "", *, tags: Sequence[Any] = ()) -> str:
        """Defines an op from its schema (namespace optional); returns its name."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        file, line = _caller()
        self._c().define(schema, list(tags_of(tags)), file, line)
        name = schema.split("(", 1)[0].split("::")[-1]
        self._op_defs.append(name)
        _op_events.deliver()  # its event reaches the followers (opreg.torch) before we return
        return name

    def impl(self, op_name: Any, fn: Callable[..., Any], dispatch_key: str = "", *,
             _check_aliasing: bool = False) -> None:
        """Registers a Python callable as the kernel of `op_name` (`op` or `op.overload`) for
        `dispatch_key` ("CPU", "CUDA", "Meta", "CompositeExplicit", "CompositeImplicit"; empty:
        this Library's key, or every backend).

        `fn` gets opreg's values (opreg tensors, ScalarType codes, device strings), or torch's
        when its annotations name torch types (`x: torch.Tensor`), as opreg.custom_op's body.
        A CompositeImplicit (CompositeImplicitAutograd) kernel not annotated with opreg types
        is also the op's CompositeImplicitAutograd kernel in torch (through opreg.torch), called
        there with torch values as torch calls one: torch.ops calls decompose into the ops it
        calls, so gradients flow through them and FakeTensor tracing and torch.compile trace
        through it. The op keeps opreg's kernels in torch only for the backends where opreg has
        a kernel of its own."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        file, line = _caller()
        name = _op_name(op_name)
        qualified = self._qualified(name)
        key = dispatch_key or self.dispatch_key
        asked = annotated_values(fn)
        kernel = fn
        if asked:
            kernel = kernel_for(fn, lambda: FunctionSchema(_C.schema(qualified)), True)
        self._c().impl(name, kernel, key, _check_aliasing, file, line)
        if key in _COMPOSITE_IMPLICIT_KEYS:
            _op_events.COMPOSITES.setdefault(qualified, []).append((fn, asked is not False))
            self._composites.append((qualified, fn))
            _op_events.composites_changed(qualified)
        else:
            self._kernel_ops.add(qualified)
            if qualified in _op_events.COMPOSITES:
                _op_events.composites_changed(qualified)  # which backends keep opreg's kernel

    def _qualified(self, name: str) -> str:
        """"ns::name" or "ns::name.overload" of an op name given to this Library."""
        qualified = name if "::" in name else f"{self.ns}::{name}"
        return qualified[:-len(".default")] if qualified.endswith(".default") else qualified

    def register_fake(self, op_name: Any, fn: Callable[..., Any]) -> None:
        """The op's fake, as torch.library.register_fake's: `fn` takes the op's arguments with
        tensors of the outputs' shapes and dtypes in place of data, and returns such tensors
        (`torch.empty_like(x)`, `x.new_empty(shape)`, `opreg.empty_like(x)`). It serves both
        worlds: torch's tracing (torch.compile, FakeTensor) calls it with FakeTensors, whose
        sizes stay symbolic (through opreg.torch), and opreg's Meta key calls it with opreg
        meta tensors, or with torch meta tensors when it refuses those (_fake_adapter). Undone
        with the Library. `register_meta` registers an opreg-only Meta kernel instead."""
        name = _op_name(op_name)
        self.register_meta(name, _fake_adapter.meta_kernel_of(fn))
        qualified = self._qualified(name)
        _op_events.FAKES[qualified] = fn
        self._fakes.append((qualified, fn))

    def register_meta(self, op_name: Any, fn: Callable[..., Any]) -> None:
        """An opreg Meta kernel (what register_fake meant in opreg before it took torch-style
        fakes): called with opreg meta tensors only, returns opreg meta tensors of the outputs'
        shapes and dtypes (`opreg.empty(shape, dtype, device="meta")`, `x.new_empty(shape)`).
        torch's tracing derives its fake from it (specialising the sizes of new returns)."""
        file, line = _caller()
        self._c().impl(_op_name(op_name), fn, "Meta", False, file, line)

    _register_fake = register_fake

    def fallback(self, fn: Callable[..., Any], dispatch_key: str = "") -> None:
        """A boxed fallback for every op without a kernel for this IMPL Library's key. `fn`
        receives the OpOverload first, then the op's arguments."""
        if dispatch_key and dispatch_key != self.dispatch_key:
            raise ValueError("fallback: dispatch_key must be the Library's own (IMPL) key")
        file, line = _caller()
        self._c().fallback(fn, file, line)

    def register_symm_mem_args(self, op_name: Any, arg_names: Sequence[str], *, required: bool = True) -> None:
        """Declares the arguments of an op that live in symmetric memory."""
        file, line = _caller()
        self._c().register_symm_mem_args(_op_name(op_name), list(arg_names), required, file, line)

    def link_out_variant(self, functional: Any, out: Any, out_arguments: Sequence[str]) -> None:
        """Links a functional op to an out variant whose out arguments are named (vLLM style)."""
        file, line = _caller()
        self._c().link_out_variant(_op_name(functional), _op_name(out), list(out_arguments), file, line)

    def _destroy(self) -> None:
        """Undoes every registration of this Library now."""
        _forget_fakes(self._fakes)
        if self._lib is not None:
            self._finalizer.detach()
            self._lib.destroy()
            self._lib = None
            _forget_composites(self._composites, self._kernel_ops, now=False)
            _op_events.deliver()  # the undefinitions reach the followers before we return


def register_autograd(op: Any, backward: Callable[..., Any], *,
                      setup_context: Optional[Callable[..., Any]] = None) -> None:
    """torch.library.register_autograd for an opreg op (OpOverload, OpPacket or "ns::name"):
    gradients flow through it when it is called from torch (`torch.ops.<ns>`, through
    `opreg.torch`, which this imports; needs torch)."""
    from . import torch as bridge

    bridge.register_autograd(op, backward, setup_context=setup_context)


def opcheck(op: Any, args: Tuple[Any, ...], kwargs: Optional[dict] = None, *,
            test_utils: Any = None, raise_exception: bool = True, atol: Optional[float] = None,
            rtol: Optional[float] = None) -> dict:
    """torch.library.opcheck on the torch op of an opreg op: schema, fake (meta) kernel,
    autograd registration and AOT dispatch checked on `args` (torch tensors). Returns torch's
    dict of test name -> "SUCCESS"; raises on the first failure unless raise_exception=False."""
    import torch

    from . import torch as bridge

    extra: dict = {} if test_utils is None else {"test_utils": test_utils}
    return torch.library.opcheck(bridge.to_torch_op(op), args, kwargs, raise_exception=raise_exception,
                                 atol=atol, rtol=rtol, **extra)


# Per namespace: the FRAGMENT Library of the module-level functions, kept for the process.
_fragments: Dict[str, Library] = {}
_fragments_lock = threading.Lock()

# torch.library's device types, and the dispatch keys opreg takes as they are.
_DEVICE_TYPE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta",
                     "default": "CompositeExplicitAutograd"}


def _split_qualname(qualname: str) -> Tuple[str, str]:
    ns, sep, name = qualname.partition("::")
    if not sep or not ns or not name:
        raise ValueError(f"expected a qualified op name 'namespace::name', got {qualname!r}")
    return ns, name


def _qualified(op: Any) -> Tuple[str, str]:
    """(namespace, "name" or "name.overload") of an op given as "ns::name[.overload]", an
    opreg OpOverload or OpPacket, or a CustomOpDef."""
    if isinstance(op, str):
        return _split_qualname(op)
    name = getattr(op, "name", None)
    if not isinstance(name, str):
        raise TypeError(f"expected an op ('ns::name', an opreg OpOverload or CustomOpDef), "
                        f"got {type(op).__name__}")
    return _split_qualname(name)


def _library(ns: str, lib: Optional[Library]) -> Library:
    if lib is not None:
        return lib
    with _fragments_lock:  # two threads registering into one namespace make one Library
        kept = _fragments.get(ns)
        if kept is None or kept._lib is None:
            kept = _fragments[ns] = Library(ns, "FRAGMENT")
        return kept


def _dispatch_keys(types: Union[None, str, Sequence[str]]) -> list:
    if types is None:  # torch's "every device type": one kernel for every backend
        return ["CompositeExplicitAutograd"]
    keys = []
    for t in [types] if isinstance(types, str) else list(types):
        keys.append(_DEVICE_TYPE_KEYS.get(t, t))  # a dispatch key name passes as it is
    return keys


def define(qualname: str, schema: str, *, lib: Optional[Library] = None,
           tags: Sequence[Any] = ()) -> None:
    """torch.library.define: defines op `qualname` ("ns::name" or "ns::name.overload") with
    `schema`, its arguments and returns ("(Tensor x) -> Tensor")."""
    ns, name = _split_qualname(qualname)
    _library(ns, lib).define(name + schema, tags=tags)


def impl(qualname: Any, types: Union[str, Sequence[str]],
         func: Optional[Callable[..., Any]] = None, *, lib: Optional[Library] = None) -> Any:
    """torch.library.impl: `func` as the kernel of `qualname` for device types `types` ("cpu",
    "cuda", "meta", "default", or dispatch key names); a decorator without `func`."""
    ns, name = _qualified(qualname)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        target = _library(ns, lib)
        for key in _dispatch_keys(types):
            target.impl(name, f, key)
        return f

    return register if func is None else register(func)


def register_kernel(op: Any, device_types: Union[None, str, Sequence[str]],
                    func: Optional[Callable[..., Any]] = None, /, *,
                    lib: Optional[Library] = None) -> Any:
    """torch.library.register_kernel: as `impl`, with torch's argument order; device_types None
    registers one kernel for every device type (CompositeExplicitAutograd), as torch does."""
    return impl(op, device_types, func, lib=lib)


def register_fake(op: Any, func: Optional[Callable[..., Any]] = None, /, *,
                  lib: Optional[Library] = None) -> Any:
    """torch.library.register_fake: `func` as the fake of `op` (Library.register_fake: torch's
    tracing and opreg's Meta key both use it), out overloads included; a decorator without
    `func`."""
    return _registrar(op, func, lib, Library.register_fake)


def register_meta(op: Any, func: Optional[Callable[..., Any]] = None, /, *,
                  lib: Optional[Library] = None) -> Any:
    """An opreg-only Meta kernel for `op` (Library.register_meta: opreg meta tensors in and out);
    a decorator without `func`."""
    return _registrar(op, func, lib, Library.register_meta)


def _registrar(op: Any, func: Optional[Callable[..., Any]], lib: Optional[Library],
               method: Callable[[Library, str, Callable[..., Any]], None]) -> Any:
    """`method(library of op's namespace, op's name, func)`, or a decorator doing it."""
    ns, name = _qualified(op)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        method(_library(ns, lib), name, f)
        return f

    return register if func is None else register(func)


def __getattr__(name: str) -> Any:
    # custom_op.py imports this module, so its names are looked up on first use.
    if name in ("custom_op", "infer_schema"):
        # The submodule (the package's `custom_op` attribute is the function).
        module = importlib.import_module(f"{__package__}.custom_op")
        return getattr(module, name)
    raise AttributeError(f"module 'opreg.library' has no attribute {name!r}")
