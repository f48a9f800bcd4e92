"""What the torch-bridge test modules share (import it after `pytest.importorskip("torch")`):
`needs_ops`, the autouse `fresh_dynamo` fixture (a module that imports it gets a reset dynamo
around each test) and `no_graph_break()`."""
import pytest
import torch
import torch._dynamo.testing  # noqa: F401 - torch._dynamo.utils.counters

import opreg

needs_ops = pytest.mark.skipif("opreg::add" not in opreg.list_ops(),
                               reason="opreg::ops not linked in this build")


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


def no_graph_break():
    breaks = dict(torch._dynamo.utils.counters["graph_break"])
    assert breaks == {}, breaks
