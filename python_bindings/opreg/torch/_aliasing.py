"""Ops whose returns are their written arguments (out variants, `foo_` returning `Tensor(a!)`).

torch's functionalization only handles mutable custom ops whose returns carry no alias
annotation, so such an op gets a companion op (same arguments, `-> ()`, in the `opreg_mut`
namespace) and becomes a CompositeImplicitAutograd decomposition that calls the companion and
returns those arguments. That decomposition serves tracing only: with a kernel of its own at
CPU/CUDA (which torch prefers to a CompositeImplicitAutograd one there, and then at the Autograd
keys too) the op reaches the C++ kernel with no Python frame in eager calls, returning the
caller's tensors and bumping their versions. A Python CompositeImplicit kernel from
opreg.Library.impl takes the decomposition's place, as for any op (_kernel_set).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import torch

from ._kernel_set import KernelSpec, sync_kernels
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


def register_aliasing(record: TorchOpRecord, text: str, schema: Any, target: str) -> None:
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
    companion_record.spec = KernelSpec(qualified, companion_schema, companion, qualified)
    sync_kernels(companion_record)
    companion_op = getattr(getattr(torch.ops, COMPANION_NS), companion).default
    companion_record.torch_op = companion_op
    aliased = aliased_returns(schema)
    single = len(schema.returns) == 1

    def decomposition(*args: Any, **kwargs: Any) -> Any:
        companion_op(*args, **kwargs)
        results = tuple(_argument(schema, i, args, kwargs) for i in aliased)
        return results[0] if single else results

    record.spec = KernelSpec(qualified, schema, target, qualified, decomposition)
    sync_kernels(record)
