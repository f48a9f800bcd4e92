"""Symbolic return shapes of opreg's built-in ops, for opreg.torch's fakes.

opreg's Meta kernels compute concrete shapes, so a fake built on them alone specialises every
size it sees (torch then refuses a size marked dynamic). For the built-in ops these functions
give the same shapes in terms of the traced arguments' sizes, which stay symbolic under
dynamic shapes, as the symbolic meta functions of torch's own ops do. The Meta kernel still
runs (on the sizes of the example traced, read without guards) to check the arguments and give
the dtypes, and its shapes must agree with these at that example, so a rule written here that
drifts from the C++ one fails loudly rather than tracing a wrong shape.

Each function takes the op's arguments as torch passes them to a fake (defaults as in the
schema) and returns one shape per return. Every return of these ops is a new contiguous tensor.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Dict, List, Sequence

import torch

Shape = Sequence[Any]  # ints and SymInts


def _broadcast(self: torch.Tensor, other: torch.Tensor, **_: Any) -> List[Shape]:
    return [torch.broadcast_shapes(self.shape, other.shape)]


def _same_as_first(x: torch.Tensor, *_: Any, **__: Any) -> List[Shape]:
    return [x.shape]


def _split_add(x: torch.Tensor, y: torch.Tensor) -> List[Shape]:
    return [x.shape, x.shape]


def _silu_and_mul(x: torch.Tensor) -> List[Shape]:
    return [(*x.shape[:-1], x.shape[-1] // 2)]


def _per_token_quant(x: torch.Tensor, dtype: Any) -> List[Shape]:
    rows = functools.reduce(operator.mul, x.shape[:-1], 1)
    return [x.shape, (rows, 1)]


def _topk(x: torch.Tensor, k: Any, dim: int = -1, largest: bool = True) -> List[Shape]:
    shape = list(x.shape)
    shape[dim % x.dim()] = k
    return [shape, shape]


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: Any = None) -> List[Shape]:
    return [(*x.shape[:-1], weight.shape[0])]


SHAPES: Dict[str, Callable[..., List[Shape]]] = {
    "opreg::add": _broadcast,
    "opreg::mul": _broadcast,
    "opreg::split_add": _split_add,
    "opreg::rms_norm": _same_as_first,
    "opreg::silu_and_mul": _silu_and_mul,
    "opreg::per_token_quant": _per_token_quant,
    "opreg::topk": _topk,
    "opreg::softmax": _same_as_first,
    "opreg::linear": _linear,
}


def from_output_specs(specs: List[Dict[str, Any]], schema: Any) -> Callable[..., List[Shape]]:
    """The symbolic shape rule of an op whose Meta kernel computes its shapes from OutputSpecs
    (Library::def_functional in C++; `specs` as opreg._C._output_specs gives them): the same
    steps as OutputSpec::Compute, on the traced arguments' sizes, so a C++ library's functional
    op keeps dynamic sizes with no Python fake. The Meta kernel still checks each trace (the
    caller compares its shapes at the example with these)."""
    names = [a.name for a in schema.arguments]

    def argument(args: Sequence[Any], kwargs: Dict[str, Any], name: str) -> Any:
        i = names.index(name)
        if i < len(args):
            return args[i]
        if name in kwargs:
            return kwargs[name]
        return schema.arguments[i].default_value

    def rule(*args: Any, **kwargs: Any) -> List[Shape]:
        shapes: List[Shape] = []
        for spec in specs:
            if spec["kind"] == "from_ints":
                shape: List[Any] = []
                for name in spec["args"]:
                    v = argument(args, kwargs, name)
                    shape.extend(v if isinstance(v, (list, tuple)) else [v])
            else:
                shape = list(argument(args, kwargs, spec["args"][0]).shape)
                if spec["kind"] == "per_row":
                    shape[-1] = 1
            if spec["divide_last"] != 1 or spec["multiply_last"] != 1:
                shape[-1] = shape[-1] // spec["divide_last"] * spec["multiply_last"]
            if spec["last_from"] is not None:
                shape[-1] = argument(args, kwargs, spec["last_from"])
            shapes.append(shape)
        return shapes

    return rule
