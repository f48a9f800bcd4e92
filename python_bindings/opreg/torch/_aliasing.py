"""Ops whose returns are their written arguments (out variants, `foo_` returning `Tensor(a!)`).

torch's functionalization only handles mutable custom ops whose returns carry no alias
annotation, so such an op gets a companion op (same arguments, `-> ()`, in the `opreg_mut`
namespace) and becomes a CompositeImplicitAutograd decomposition that calls the companion and
returns those arguments. That decomposition serves tracing only: with a kernel of its own at
CPU/CUDA (which torch prefers to a CompositeImplicitAutograd one there, and then at the Autograd
keys too) the op reaches the C++ kernel with no Python frame in eager calls, returning the
caller's tensors and bumping their versions.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import torch

from . import _kernels
from ._records import RECORDS, TorchOpRecord

COMPANION_NS = "opreg_mut"


def aliased_returns(schema: Any) -> List[Optional[int]]:
    """For each return, the index of the argument it is (a `Tensor(a!)` return), else None."""
    out: List[Optional[int]] = []
    for ret in schema.returns:
        found = None
        if ret.alias_info is not None and ret.alias_info.is_write:
            for i, arg in enumerate(schema.arguments):
                if arg.alias_info is not None and \
                        arg.alias_info.before_set == ret.alias_info.before_set:
                    found = i
                    break
        out.append(found)
    return out


def _argument(schema: Any, index: int, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    if index < len(args):
        return args[index]
    return kwargs[schema.arguments[index].name]


def register_aliasing(record: TorchOpRecord, opreg_op: Any, text: str, schema: Any,
                      lib: torch.library.Library, target: str) -> None:
    """The companion op and the decomposition of torch op `record` (see the module)."""
    qualified = record.qualified
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    companion = f"{ns}__{name}__{overload or 'default'}"
    arguments = text.split("::", 1)[1][len(rest):].rsplit(" -> ", 1)[0]
    clib = torch.library.Library(COMPANION_NS, "FRAGMENT")
    record.libs.append(clib)
    clib.define(f"{companion}{arguments} -> ()")
    companion_qualified = f"{COMPANION_NS}::{companion}"
    companion_schema = torch._C.parse_schema(f"{companion_qualified}{arguments} -> ()")
    record.companion = companion_qualified
    companion_record = RECORDS.new(companion_qualified, owner=qualified)
    _kernels.register_kernels(companion_record, opreg_op, companion_schema, clib, companion,
                              qualified)
    companion_op = getattr(getattr(torch.ops, COMPANION_NS), companion).default
    companion_record.torch_op = companion_op
    aliased = aliased_returns(schema)
    single = len(schema.returns) == 1

    def decomposition(*args: Any, **kwargs: Any) -> Any:
        companion_op(*args, **kwargs)
        results = tuple(_argument(schema, i, args, kwargs) for i in aliased)
        return results[0] if single else results

    lib.impl(target, decomposition, "CompositeImplicitAutograd")
    if not _kernels.register_eager_kernel(opreg_op, schema, lib, target, qualified) and \
            _kernels.has_tensor_arguments(schema):
        record.python_kernel = companion_record.python_kernel  # its eager kernel is on that path
