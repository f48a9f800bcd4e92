"""The fake (meta) implementations opreg.torch gives torch for opreg's ops.

An op's fake runs its opreg Meta kernel on opreg meta tensors of the traced shapes and dtypes
and returns torch tensors of the results' layouts; a built-in op's symbolic shape rule
(_builtin_shapes.py) keeps sizes symbolic; a fake given to opreg.torch.register_fake (kept in
the op's record) or to opreg.library's register_fake (`FAKES`) is called with the FakeTensors
instead.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch

from .. import _C
from .._builtin_shapes import SHAPES as _SYMBOLIC_SHAPES
from .._builtin_shapes import from_output_specs as _from_output_specs
from .._op_events import FAKES, torch_composite
from .._return_mode import returning_opreg_tensors
from ._records import TorchOpRecord


_TORCH_DTYPES: Dict[str, torch.dtype] = {}


def _torch_dtype(name: str) -> torch.dtype:
    dt = _TORCH_DTYPES.get(name)
    if dt is None:
        dt = getattr(torch, name)
        _TORCH_DTYPES[name] = dt
    return dt


class _NoHint(Exception):
    """A size of the traced example has no value (a data-dependent size)."""


def _size_hint(d: Any) -> Optional[int]:
    """The value a symbolic size has in the example being traced, read without adding a guard
    (None for a data-dependent size, which has none); a plain int as it is."""
    if isinstance(d, int):
        return d
    node = getattr(d, "node", None)
    hint = getattr(node, "hint", None) if node is not None else None
    if isinstance(hint, int):
        return hint
    if hint is None or isinstance(hint, torch.SymInt):  # converting a SymInt would guard
        return None
    try:
        return operator.index(hint)  # a sympy Integer, say
    except TypeError:
        return None


# What may serve an opreg op's Meta key while torch traces: a kernel written for Meta, a
# CompositeImplicit kernel (made of other ops, each with its own Meta kernel) or a Meta fallback.
# A CompositeExplicit or catch-all kernel is real code for real memory: on meta tensors it could
# write through a null pointer, so it never runs there.
_META_SAFE = frozenset({"own", "composite_implicit", "fallback"})


def _meta_origin(opreg_op: Any) -> str:
    """What serves the op's Meta key now ('own', 'catch_all', ...): asked at each trace, since a
    Meta kernel may be registered after the op became a torch op."""
    return _C._kernel_origin(opreg_op.name, "Meta")


def make_fake(opreg_op: Any, schema: Any, record: TorchOpRecord) -> Callable[..., Any]:
    """A fake implementation that runs the opreg op's Meta kernel on opreg meta tensors of the
    fake tensors' shapes and dtypes, then makes torch tensors of the results' layouts.

    An op whose returns alias its arguments never gets one: it is a decomposition onto a `-> ()`
    companion op (_aliasing), so the returns here are all new, or there are none.

    With no returns (`-> ()`, as vLLM's kernels are) no shape comes out of the Meta kernel: it
    runs only to check the arguments, on the sizes of the example being traced read without
    guards, so symbolic (dynamic) sizes stay symbolic. An op of that kind without a Meta kernel
    gets no checks, as torch's own fake for such ops. Ops with returns need their shapes: their
    sizes are specialised to the example's, and an op whose Meta key is not served by code for
    meta tensors (_META_SAFE) raises NotImplementedError naming the op. The built-in ops have
    symbolic shape rules (_builtin_shapes): their sizes stay symbolic, the Meta kernel checking
    the arguments and giving the dtypes on the example's sizes. A fake given with register_fake
    replaces all of this.
    """
    qualified = record.qualified
    needs_shapes = bool(schema.returns)
    single = len(schema.returns) == 1

    def to_meta(v: Any) -> Any:
        if isinstance(v, torch.Tensor):
            return _C.empty(list(v.shape), str(v.dtype), "meta")
        if isinstance(v, (list, tuple)) and any(isinstance(e, torch.Tensor) for e in v):
            return type(v)(to_meta(e) for e in v)
        return v

    def to_meta_unguarded(v: Any) -> Any:
        """As to_meta, with sizes (and SymInt arguments) from hints; None for no hint."""
        if isinstance(v, torch.Tensor):
            shape = [_size_hint(d) for d in v.shape]
            if any(d is None for d in shape):
                raise _NoHint()
            return _C.empty(shape, str(v.dtype), "meta")
        if isinstance(v, torch.SymInt):
            h = _size_hint(v)
            if h is None:
                raise _NoHint()
            return h
        if isinstance(v, (list, tuple)) and any(isinstance(e, (torch.Tensor, torch.SymInt))
                                                for e in v):
            return type(v)(to_meta_unguarded(e) for e in v)
        return v

    def first_device(args: Sequence[Any], kwargs: Dict[str, Any]) -> torch.device:
        for v in list(args) + list(kwargs.values()):
            if isinstance(v, torch.Tensor):
                return v.device
            if isinstance(v, (list, tuple)):
                for e in v:
                    if isinstance(e, torch.Tensor):
                        return e.device
        return torch.device("cpu")

    def from_meta(t: Any, device: torch.device) -> Any:
        if isinstance(t, _C.Tensor):
            return torch.empty_strided(t.shape, t.strides, dtype=_torch_dtype(t.dtype),
                                       device=device)
        if isinstance(t, (list, tuple)):
            return type(t)(from_meta(e, device) for e in t)
        return t

    def on_hints(args: Sequence[Any], kwargs: Dict[str, Any]) -> Tuple[bool, Any]:
        """(True, the Meta kernel's result) on the sizes of the example traced, read without
        guards; (False, None) when a size has no value there (a data-dependent one)."""
        try:
            meta_args = [to_meta_unguarded(a) for a in args]
            meta_kwargs = {k: to_meta_unguarded(v) for k, v in kwargs.items()}
        except _NoHint:
            return False, None
        with returning_opreg_tensors():
            return True, opreg_op(*meta_args, **meta_kwargs)

    def check_only(args: Sequence[Any], kwargs: Dict[str, Any]) -> None:
        if _meta_origin(opreg_op) not in _META_SAFE:
            return  # no Meta kernel: nothing checks the arguments, as in torch's fake for the op
        try:
            on_hints(args, kwargs)
        except NotImplementedError:
            pass  # a composite kernel calls an op without a Meta kernel: nothing to check with

    def symbolic(symbolic_shapes: Callable[..., Any], args: Sequence[Any],
                 kwargs: Dict[str, Any]) -> Any:
        """Returns of the op's symbolic shapes and its Meta kernel's dtypes; None when a size
        has no value in the example (the Meta kernel cannot run on it)."""
        ran, result = on_hints(args, kwargs)
        if not ran:
            return None
        results = [result] if single else list(result)
        shapes = symbolic_shapes(*args, **kwargs)
        device = first_device(args, kwargs)
        if len(shapes) != len(results):
            raise RuntimeError(f"[{opreg_op.name}] opreg.torch's symbolic shapes give "
                               f"{len(shapes)} returns, the Meta kernel {len(results)}: a bug in "
                               f"opreg's symbolic shape rule for it")
        out = []
        for r, shape in zip(results, shapes):
            if [_size_hint(d) for d in shape] != list(r.shape):
                raise RuntimeError(
                    f"[{opreg_op.name}] opreg.torch's symbolic shape {tuple(shape)} differs from "
                    f"the Meta kernel's {tuple(r.shape)}: a bug in opreg's symbolic shape rule "
                    f"for it")
            out.append(torch.empty(shape, dtype=_torch_dtype(r.dtype), device=device))
        return out[0] if single else tuple(out)

    def check_one_device(args: Sequence[Any], kwargs: Dict[str, Any]) -> None:
        """The opreg dispatcher's rule, which the meta tensors below no longer show: every
        tensor argument on one device type (torch's Meta key is chosen for a meta tensor even
        when another argument is a CPU tensor, which torch's own ops refuse)."""
        names = [a.name for a in schema.arguments]
        seen: List[Tuple[str, torch.device]] = []
        values = list(zip(names, args)) + list(kwargs.items())
        for name, v in values:
            items = v if isinstance(v, (list, tuple)) else [v]
            for e in items:
                if isinstance(e, torch.Tensor):
                    seen.append((name, e.device))
        for name, device in seen[1:]:
            if device.type != seen[0][1].type:
                raise RuntimeError(
                    f"[{opreg_op.name}] expected every tensor on one device: argument "
                    f"'{seen[0][0]}' is on {seen[0][1]}, argument '{name}' on {device}")

    def fake(*args: Any, **kwargs: Any) -> Any:
        composite = torch_composite(record.owner or qualified)
        if composite is not None:  # a composite op (_kernel_set) decomposes here too
            result = composite(*args, **kwargs)
            return result if needs_shapes else None  # a companion returns nothing
        given = record.torch_fake  # opreg.torch.register_fake's
        if given is not None:
            return given(*args, **kwargs)
        check_one_device(args, kwargs)
        user = FAKES.get(opreg_op.name)  # register_fake's (also the op's Meta kernel)
        if user is not None:
            try:
                result = user(*args, **kwargs)
            except (TypeError, AttributeError):
                pass  # written for opreg tensors only: through the Meta kernel below
            else:
                return result if needs_shapes else None  # a companion returns nothing
        if not needs_shapes:
            check_only(args, kwargs)
            return None
        origin = _meta_origin(opreg_op)
        if origin not in _META_SAFE:
            raise NotImplementedError(
                f"[{opreg_op.name}] tracing (torch.compile, FakeTensor) needs the shapes of its "
                f"returns, and the op has no Meta kernel (its Meta key: {origin}): register a "
                f"torch fake (opreg.torch.register_fake, which keeps dynamic sizes symbolic) or "
                f"an opreg Meta kernel (opreg.library.register_fake, or a Meta kernel in C++)")
        symbolic_shapes = _SYMBOLIC_SHAPES.get(qualified)
        if symbolic_shapes is None:
            specs = _C._output_specs(opreg_op.name)  # asked per trace: kernels may change
            if specs is not None:
                symbolic_shapes = _from_output_specs(specs, schema)
        if symbolic_shapes is not None:
            results = symbolic(symbolic_shapes, args, kwargs)
            if results is not None:
                return results
        meta_args = [to_meta(a) for a in args]
        meta_kwargs = {k: to_meta(v) for k, v in kwargs.items()}
        with returning_opreg_tensors():
            result = opreg_op(*meta_args, **meta_kwargs)
        return from_meta(result, first_device(args, kwargs))

    fake.__name__ = f"opreg_fake_{qualified.replace('::', '_').replace('.', '_')}"
    return fake
