"""Kernels for torch's Negative dispatch key on opreg's torch ops (used by opreg.torch).

A tensor with torch's negative bit set (`torch._neg_view(t)`, `z.conj().imag`) is a lazily
negated view: its memory holds the values un-negated. torch reaches such arguments through the
Negative key, whose generic fallback materializes them and, for an op that writes an argument,
requires the op to return the very tensor it wrote. opreg's `-> ()` ops (and the `-> ()`
companions behind ops that return their written arguments) return nothing, and the fallback
then fails an internal assert and leaves the process to crash at exit. The kernel here does the
fallback's work for any schema: each negated argument is replaced by a materialized copy, the
op runs on the copies with the Negative key excluded, each written copy is written back through
the caller's negated view (copy_ applies the negation), and results that are written arguments
are the caller's objects. The kernel is only reached when some argument has the bit set.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import torch

_NEGATIVE = torch._C.DispatchKeySet(torch._C.DispatchKey.Negative)


def register_negative_kernel(schema: Any, lib: torch.library.Library, target: str,
                             torch_op: Callable[[], Any]) -> None:
    """Registers the Negative-key kernel of `target` (schema: torch's FunctionSchema).
    `torch_op()` returns the op's OpOverload (it exists once registration is done)."""
    if not any("Tensor" in str(a.type) for a in schema.arguments):
        return
    written = {i for i, a in enumerate(schema.arguments)
               if a.alias_info is not None and a.alias_info.is_write}
    position = {a.name: i for i, a in enumerate(schema.arguments)}

    def negative(*args: Any, **kwargs: Any) -> Any:
        write_back: List[Tuple[torch.Tensor, torch.Tensor]] = []

        def resolve(value: Any, is_written: bool) -> Any:
            if isinstance(value, torch.Tensor):
                if not value.is_neg():
                    return value
                copy = value.resolve_neg()
                if is_written:
                    write_back.append((value, copy))
                return copy
            if isinstance(value, (list, tuple)):
                return type(value)(resolve(v, is_written) for v in value)
            return value

        new_args = [resolve(a, i in written) for i, a in enumerate(args)]
        new_kwargs = {k: resolve(v, position.get(k) in written) for k, v in kwargs.items()}
        with torch._C._ExcludeDispatchKeyGuard(_NEGATIVE):
            result = torch_op()(*new_args, **new_kwargs)
        for original, copy in write_back:
            original.copy_(copy)
        callers: Dict[int, torch.Tensor] = {id(copy): original for original, copy in write_back}
        if isinstance(result, torch.Tensor):
            return callers.get(id(result), result)
        if isinstance(result, tuple):
            return tuple(callers.get(id(r), r) if isinstance(r, torch.Tensor) else r
                         for r in result)
        return result

    lib.impl(target, negative, "Negative")
