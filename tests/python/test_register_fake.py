"""register_fake means one thing everywhere (torch.library's): a torch-style fake given to
opreg.Library.register_fake, opreg.library.register_fake, CustomOpDef.register_fake or
opreg.torch.register_fake is called with FakeTensors by torch's tracing (sizes stay symbolic),
and, except through opreg.torch's, serves opreg's Meta key too. register_meta is the other
thing: an opreg-only Meta kernel."""
import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import opreg  # noqa: E402
import opreg.torch as opreg_torch  # noqa: E402
from torch_test_util import fresh_dynamo, no_graph_break  # noqa: E402,F401

_ns = itertools.count()


def _scaled_op(how):
    """A fresh op ns::scaled(Tensor x, Tensor w) -> Tensor with a NumPy CPU kernel and the
    torch-style fake `torch.empty_like(x)` given through `how`; (ns, keep-alive objects)."""
    ns = f"fake_ns{next(_ns)}"
    seen = []

    def fake(x, w):
        seen.append(type(x))
        return torch.empty_like(x)

    def kernel(x, w):
        return np.asarray(x) * np.asarray(w)

    if how == "custom_op.register_fake":
        @opreg.custom_op(f"{ns}::scaled", mutates_args=())
        def scaled(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return kernel(x, w)

        scaled.register_fake(fake)
        return ns, seen, [scaled]
    lib = opreg.Library(ns, "DEF")
    lib.define("scaled(Tensor x, Tensor w) -> Tensor")
    lib.impl("scaled", kernel, "CPU")
    if how == "Library.register_fake":
        lib.register_fake("scaled", fake)
    elif how == "library.register_fake":
        opreg.library.register_fake(f"{ns}::scaled", fake, lib=lib)
    else:
        assert how == "opreg.torch.register_fake"
        opreg_torch.register_fake(f"{ns}::scaled", fake)
    return ns, seen, [lib]


_HOWS = ["Library.register_fake", "library.register_fake", "custom_op.register_fake",
         "opreg.torch.register_fake"]


@pytest.mark.parametrize("how", _HOWS)
def test_a_torch_style_fake_compiles_once_for_dynamic_sizes(how):
    ns, seen, keep = _scaled_op(how)
    op = getattr(torch.ops, ns).scaled
    w = torch.randn(8)
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    g = torch.compile(lambda x: op(x, w) + 1, fullgraph=True, backend=counter)
    for n in (2, 3, 5, 8):
        x = torch.randn(n, 8)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(g(x), x * w + 1)
    assert counter.frame_count == 1
    no_graph_break()
    assert seen and all(issubclass(t, torch.Tensor) for t in seen)
    del keep


@pytest.mark.parametrize("how", _HOWS[:3])
def test_a_torch_style_fake_is_also_the_opreg_meta_kernel(how):
    # opreg's Meta key runs it too: opreg meta tensors in, an opreg meta tensor out (the fake
    # refuses opreg tensors, so it gets torch meta tensors of the same layouts).
    ns, seen, keep = _scaled_op(how)
    x = opreg.empty([3, 8], "float32", device="meta")
    w = opreg.empty([8], "float32", device="meta")
    out = getattr(opreg.ops, ns).scaled(x, w)
    assert isinstance(out, opreg.Tensor)
    assert (tuple(out.shape), out.dtype, str(out.device)) == ((3, 8), "float32", "meta")
    assert seen == [opreg.Tensor, torch.Tensor]  # refused opreg's, then ran on torch's
    del keep


def test_opreg_torch_register_fake_leaves_the_opreg_meta_kernel_alone():
    ns, _, keep = _scaled_op("opreg.torch.register_fake")
    assert opreg._C._kernel_origin(f"{ns}::scaled", "Meta") != "own"
    del keep


def test_an_opreg_style_fake_still_works_on_both_sides():
    # Written for opreg tensors (opreg.empty_like): torch's tracing falls back to running it as
    # the Meta kernel (sizes specialised), opreg's Meta key runs it as it is.
    ns = f"fake_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: np.asarray(x) * 2, "CPU")
    lib.register_fake("twice", lambda x: opreg.empty_like(x))
    op = getattr(torch.ops, ns).twice
    x = torch.randn(4, 3)
    torch.testing.assert_close(torch.compile(op, fullgraph=True, backend="aot_eager")(x), x * 2)
    meta = getattr(opreg.ops, ns).twice(opreg.empty([4, 3], "float32", device="meta"))
    assert tuple(meta.shape) == (4, 3)
    lib._destroy()


def test_register_meta_is_opreg_only():
    # The other meaning, under its own name: opreg meta tensors only; torch's tracing derives
    # its fake from it (the sizes of a new return are specialised).
    ns = f"fake_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: np.asarray(x) * 2, "CPU")
    seen = []
    lib.register_meta("twice", lambda x: seen.append(type(x)) or x.new_empty(x.shape))
    assert f"{ns}::twice" not in opreg._op_events.FAKES
    op = getattr(torch.ops, ns).twice
    x = torch.randn(4, 3)
    torch.testing.assert_close(torch.compile(op, fullgraph=True, backend="aot_eager")(x), x * 2)
    assert seen and all(t is opreg.Tensor for t in seen)
    lib._destroy()


def test_a_destroyed_library_takes_its_fake_along():
    ns, _, keep = _scaled_op("Library.register_fake")
    assert f"{ns}::scaled" in opreg._op_events.FAKES
    keep[0]._destroy()
    assert f"{ns}::scaled" not in opreg._op_events.FAKES
