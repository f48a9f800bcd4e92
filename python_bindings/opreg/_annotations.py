"""Which values a kernel's type annotations ask for: torch's or opreg's. opreg.custom_op and
opreg.Library.impl both decide with it whether a Python function is written for torch values
(torch tensors, torch.dtype, torch.device) or opreg's (opreg tensors, ScalarType codes, device
strings).

This module imports only opreg's extension module: every module may import it.
"""
from __future__ import annotations

import inspect
import sys
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _C, _fake_adapter


def _mentions(annotation: Any, types: Tuple[Any, ...], names: Tuple[str, ...]) -> bool:
    """Whether a type annotation names one of `types` (also inside Optional[...], List[...],
    Sequence[...]), or, as a string annotation, one of `names`."""
    if isinstance(annotation, str):
        return any(n in annotation for n in names)
    if annotation in types:
        return True
    return any(_mentions(a, types, names) for a in typing.get_args(annotation))


def annotated_values(fn: Callable[..., Any]) -> Optional[bool]:
    """Which values `fn`'s annotations ask for: True for torch's (`x: torch.Tensor`, a
    `torch.dtype` or `torch.device`), as a torch.library.custom_op body is annotated; False for
    opreg's (`x: opreg.Tensor`); None when they name neither (also for a callable without a
    signature). torch is never imported here: without it, no annotation can name its types."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    annotations = [p.annotation for p in signature.parameters.values()]
    annotations.append(signature.return_annotation)
    annotations = [a for a in annotations if a is not inspect.Signature.empty]
    try:  # string annotations (`from __future__ import annotations`), as the names they bind
        annotations += list(typing.get_type_hints(fn).values())
    except Exception:  # a name not bound where fn was written: the strings are matched as text
        pass
    torch = sys.modules.get("torch")
    if torch is not None and any(
            _mentions(a, (torch.Tensor, torch.dtype, torch.device),
                      ("torch.Tensor", "torch.dtype", "torch.device")) for a in annotations):
        return True
    if any(_mentions(a, (_C.Tensor,), ("opreg.Tensor",)) for a in annotations):
        return False
    return None


def kernel_for(fn: Callable[..., Any], schema: Any, torch_values: bool) -> Callable[..., Any]:
    """`fn` as the op's kernel (`schema`: the op's FunctionSchema, or a function giving it).
    With `torch_values` (the op's body is annotated with torch types: annotated_values), it gets
    torch values, as it would under torch: each opreg tensor as a torch tensor over the same
    memory (torch.from_dlpack: writes reach the op's arguments), a ScalarType as its torch.dtype
    and a Device as a torch.device; its torch results are taken back zero-copy. Otherwise it gets
    opreg's values (opreg tensors, ScalarType codes, device strings) and is returned as it is."""
    if not torch_values:
        return fn
    torch = sys.modules["torch"]
    dtypes = [getattr(torch, name, None) for name in _C._torch_scalar_type_names()]

    def convert(value: Any, schema_type: str) -> Any:
        if isinstance(value, _C.Tensor):
            if value.device == "meta":  # no memory to share: a torch meta tensor alike
                return _fake_adapter.torch_meta_like(torch, value)
            return torch.from_dlpack(value)
        if isinstance(value, (list, tuple)):
            return type(value)(convert(v, schema_type) for v in value)
        if schema_type.startswith("ScalarType") and isinstance(value, int) and \
                0 <= value < len(dtypes) and dtypes[value] is not None:
            return dtypes[value]
        if schema_type.startswith("Device") and isinstance(value, str):
            return torch.device(value)
        return value

    # (types in order, types by name), read at the first call: the op may be defined after its
    # kernel is registered.
    types: Optional[Tuple[List[str], Dict[str, str]]] = None

    def back(value: Any) -> Any:
        """Torch meta results as opreg meta tensors (contiguous: opreg_meta_like); torch's other
        results cross by DLPack, strides included."""
        if isinstance(value, torch.Tensor) and value.device.type == "meta":
            return _fake_adapter.opreg_meta_like(value)
        if isinstance(value, (list, tuple)):
            return type(value)(back(v) for v in value)
        return value

    def kernel(*args: Any, **kwargs: Any) -> Any:
        nonlocal types
        if types is None:
            arguments = (schema() if callable(schema) else schema).arguments
            types = ([a.type for a in arguments], {a.name: a.type for a in arguments})
        types_in_order, types_by_name = types
        args = tuple(convert(v, types_in_order[i] if i < len(types_in_order) else "")
                     for i, v in enumerate(args))
        kwargs = {k: convert(v, types_by_name.get(k, "")) for k, v in kwargs.items()}
        return back(fn(*args, **kwargs))

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__wrapped__ = fn  # type: ignore[attr-defined]
    return kernel
