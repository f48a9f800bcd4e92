"""`opreg.graph()`: capture op calls into a graph, replay it with planned memory."""
from __future__ import annotations

from types import TracebackType
from typing import Any, Dict, List, Optional, Type

from . import _C


class Graph:
    """A captured sequence of op calls.

        with opreg.graph() as g:
            h = opreg.ops.opreg.rms_norm(x, w, 1e-6)     # proxies: meta tensors with a value id
            y = opreg.ops.opreg.silu_and_mul(h)
        out = g.replay(x2, w2)                           # planned replay on new inputs
        g.plan_stats()                                   # arena_bytes, lb_bytes, naive_bytes, ...

    Tensors from outside the block become the graph's inputs in first-use order. The outputs
    are the proxies still referenced when the block ends (in creation order), or those given
    to `g.output(...)`. Capture is per thread: other threads' op calls run as usual.

    `plan_budget_ms` > 0 makes each input shape's plan search for the smallest arena for up to
    that long (the exact mode) after the heuristics; the plan is made once per shape and reused.
    """

    def __init__(self, plan_budget_ms: float = 0.0) -> None:
        self._capture = _C._GraphCapture(plan_budget_ms)

    def __enter__(self) -> "Graph":
        self._capture.begin()
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self._capture.end(exc_type is None)

    def output(self, *tensors: _C.Tensor) -> None:
        """Sets the graph's outputs explicitly (inside the with-block)."""
        self._capture.output(*tensors)

    def replay(self, *inputs: Any) -> Any:
        """Runs the graph on `inputs` (default: the tensors used during capture) with planned
        memory; returns the output (a tuple for several, None for none)."""
        return self._capture.replay(*inputs)

    __call__ = replay

    def plan_stats(self, *inputs: Any) -> Dict[str, Any]:
        """The memory plan for inputs like these (default: the captured ones): arena_bytes,
        lb_bytes (max live bytes, the lower bound), naive_bytes (no reuse), eager_peak_bytes,
        use_arena, strategy, optimal_by ("lower bound", "search" or "": not proven),
        search (the exact mode: "", "optimal", "budget", "too large"), plan_ms, num_nodes,
        summary."""
        return dict(self._capture.plan_stats(*inputs))

    @property
    def num_inputs(self) -> int:
        return int(self._capture.num_inputs)

    @property
    def num_outputs(self) -> int:
        return int(self._capture.num_outputs)

    @property
    def num_nodes(self) -> int:
        return int(self._capture.num_nodes)

    @property
    def inputs(self) -> List[_C.Tensor]:
        """The tensors used as inputs during capture."""
        return list(self._capture.example_inputs)

    def __str__(self) -> str:
        return str(self._capture)


def graph(plan_budget_ms: float = 0.0) -> Graph:
    """A new graph capture, used as a context manager. `plan_budget_ms`: see Graph."""
    return Graph(plan_budget_ms)
