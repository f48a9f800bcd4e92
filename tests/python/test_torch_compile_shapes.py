"""opreg ops under torch.compile with dynamic sizes: ops that return nothing stay dynamic, ops
with new returns need a Meta kernel (or a torch-level fake, which keeps sizes symbolic), and
the built-in ops' symbolic shape rules, checked against their Meta kernels on every trace.
(The rest of the torch bridge is in test_torch_bridge.py.)"""
import itertools

import numpy as np
import pytest

import opreg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
from torch_test_util import fresh_dynamo, needs_ops, no_graph_break  # noqa: E402,F401

import opreg.torch as opreg_torch  # noqa: E402,F401 - registers opreg's ops in torch.ops

_ns = itertools.count()


def _silu_and_mul_library(meta_kernel, kernel_key="CPU"):
    """A vLLM-style op: writes its result into `out`, returns nothing, one real kernel for
    `kernel_key` (and a Meta kernel that checks the shapes when `meta_kernel`). The real kernel
    records the device of every call it gets, in `lib.seen`."""
    ns = f"compile_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("silu_and_mul(Tensor(a!) out, Tensor x) -> ()")
    lib.seen = []

    def kernel(out, x):
        lib.seen.append(str(x.device))
        x = np.asarray(x)
        d = x.shape[-1] // 2
        np.asarray(out)[...] = x[..., :d] / (1 + np.exp(-x[..., :d])) * x[..., d:]

    def meta(out, x):
        if tuple(out.shape) != (x.shape[0], x.shape[1] // 2):
            raise ValueError(f"silu_and_mul: out has shape {tuple(out.shape)}, expected "
                             f"{(x.shape[0], x.shape[1] // 2)}")

    lib.impl("silu_and_mul", kernel, kernel_key)
    if meta_kernel:
        lib.impl("silu_and_mul", meta, "Meta")
    return ns, lib


@pytest.mark.parametrize("meta_kernel,kernel_key",
                         [(False, "CPU"), (True, "CPU"), (False, "CompositeExplicit")],
                         ids=["no_meta_kernel", "meta_kernel", "composite_explicit_kernel"])
def test_ops_returning_nothing_compile_with_dynamic_sizes(meta_kernel, kernel_key):
    # Such an op needs no Meta kernel (torch's own fake for it checks nothing either), and its
    # fake reads the sizes without guards: one graph serves every batch size. A kernel for every
    # backend (CompositeExplicit) is real code: tracing never runs it on meta tensors.
    ns, lib = _silu_and_mul_library(meta_kernel, kernel_key)
    op = getattr(torch.ops, ns).silu_and_mul

    def f(x):
        out = torch.empty(x.shape[0], x.shape[1] // 2)
        op(out, x)
        return out + 1

    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    g = torch.compile(f, fullgraph=True, backend=counter, dynamic=True)
    for n in (3, 5, 9, 17):
        x = torch.randn(n, 8)
        torch.testing.assert_close(g(x), torch.nn.functional.silu(x[:, :4]) * x[:, 4:] + 1)
    assert counter.frame_count == 1
    no_graph_break()
    result = opreg.opcheck(f"{ns}::silu_and_mul", (torch.empty(4, 3), torch.randn(4, 6)))
    assert set(result.values()) == {"SUCCESS"}, result
    assert lib.seen and set(lib.seen) == {"cpu"}, lib.seen
    if meta_kernel:  # the Meta kernel still checks the arguments while tracing
        bad = torch.compile(lambda x: op(torch.empty(x.shape[0], 3), x), fullgraph=True,
                            backend="aot_eager", dynamic=True)
        with pytest.raises(Exception, match="out has shape"):
            bad(torch.randn(4, 8))
    lib._destroy()


def test_tracing_an_op_with_new_returns_needs_a_meta_kernel():
    # Its fake needs the returns' shapes; a kernel for every backend is not run on meta tensors
    # to get them: the error names the op and what to register.
    ns = f"compile_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    seen = []

    def kernel(x):
        seen.append(str(x.device))
        return np.asarray(x) * 2

    lib.impl("twice", kernel, "CompositeExplicit")
    op = getattr(torch.ops, ns).twice
    x = torch.randn(3)
    torch.testing.assert_close(op(x), x * 2)
    g = torch.compile(lambda x: op(x) + 1, fullgraph=True, backend="aot_eager")
    with pytest.raises(Exception, match=rf"\[{ns}::twice\].*no Meta kernel.*register_fake"):
        g(x)
    assert set(seen) == {"cpu"}, seen
    lib._destroy()


def test_a_torch_level_fake_keeps_the_sizes_of_new_returns_dynamic():
    # The fake derived from a Meta kernel specialises the sizes of new returns, which torch
    # refuses for a size marked dynamic; opreg.torch.register_fake's fake keeps them symbolic.
    ns = f"compile_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("scaled(Tensor x, Tensor w) -> Tensor")
    lib.impl("scaled", lambda x, w: np.asarray(x) * np.asarray(w), "CPU")
    lib.impl("scaled", lambda x, w: opreg.empty_like(x), "Meta")
    op = getattr(torch.ops, ns).scaled
    w = torch.randn(8)

    def f(x):
        return op(x, w) + 1

    def marked(n):
        x = torch.randn(n, 8)
        torch._dynamo.mark_dynamic(x, 0)
        return x

    with pytest.raises(Exception, match="marked .* as dynamic but your code specialized it"):
        torch.compile(f, fullgraph=True, backend="aot_eager")(marked(4))
    torch._dynamo.reset()
    opreg_torch.register_fake(f"{ns}::scaled", lambda x, w: torch.empty_like(x))
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    g = torch.compile(f, fullgraph=True, backend=counter)
    for n in (4, 5, 9, 17):
        x = marked(n)
        torch.testing.assert_close(g(x), x * w + 1)
    assert counter.frame_count == 1
    no_graph_break()
    result = opreg.opcheck(f"{ns}::scaled", (torch.randn(3, 8), w))
    assert set(result.values()) == {"SUCCESS"}, result
    # An op returning nothing takes one too (its own checks while tracing, here), and so does
    # one that returns its mutated arguments (through its -> () companion).
    silu_ns, silu_lib = _silu_and_mul_library(meta_kernel=False)
    seen = []
    opreg_torch.register_fake(f"{silu_ns}::silu_and_mul", lambda out, x: seen.append(x.shape))
    silu = getattr(torch.ops, silu_ns).silu_and_mul
    torch.compile(lambda x: silu(torch.empty(4, 4), x), fullgraph=True, backend="aot_eager")(
        torch.randn(4, 8))
    assert seen and {tuple(s) for s in seen} == {(4, 8)}
    lib.define("scale_(Tensor(a!) x, float a) -> Tensor(a!)")

    def scale_(x, a):
        np.asarray(x)[...] *= a
        return x

    lib.impl("scale_", scale_, "CPU")
    faked = []
    opreg_torch.register_fake(f"{ns}::scale_", lambda x, a: faked.append(a) or x)
    y = torch.ones(3)
    torch.compile(lambda y: getattr(torch.ops, ns).scale_(y, 3.0), fullgraph=True,
                  backend="aot_eager")(y)
    assert faked and set(faked) == {3.0} and y.tolist() == [3.0] * 3
    silu_lib._destroy()
    lib._destroy()


_W16, _W8x16, _B8 = torch.randn(16), torch.randn(8, 16), torch.randn(8)
_BUILTIN_CALLS = {
    "rms_norm": lambda x: torch.ops.opreg.rms_norm(x, _W16, 1e-6),
    "silu_and_mul": lambda x: torch.ops.opreg.silu_and_mul(x),
    "linear": lambda x: torch.ops.opreg.linear(x, _W8x16, _B8),
    "topk": lambda x: torch.ops.opreg.topk(x, 3)[0] + torch.ops.opreg.topk(x, 3, dim=1)[1],
    "per_token_quant": lambda x: torch.ops.opreg.per_token_quant(x, torch.int8)[1],
    "add": lambda x: torch.ops.opreg.add(x, _W16, alpha=2),
    "mul": lambda x: torch.ops.opreg.mul(x, x),
    "softmax": lambda x: torch.ops.opreg.softmax(x),
    "split_add": lambda x: torch.ops.opreg.split_add(x, x)[1],
}


@needs_ops
@pytest.mark.parametrize("name", sorted(_BUILTIN_CALLS))
def test_builtin_ops_keep_a_dynamic_batch_size_symbolic(name):
    # Their fakes have symbolic shape rules: a batch size marked dynamic stays so (one graph),
    # where a fake built on the Meta kernel alone would specialise it and torch refuse that.
    f = _BUILTIN_CALLS[name]
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    g = torch.compile(f, fullgraph=True, backend=counter)
    for n in (3, 5, 9):
        x = torch.randn(n, 16)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(g(x), f(x))
    assert counter.frame_count == 1
    no_graph_break()


@needs_ops
def test_builtin_symbolic_shapes_compile_with_inductor_and_are_checked(monkeypatch):
    f = _BUILTIN_CALLS["silu_and_mul"]
    g = torch.compile(f, fullgraph=True, backend="inductor")
    for n in (3, 5):
        x = torch.randn(n, 16)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(g(x), f(x))
    # A rule that drifts from the Meta kernel fails loudly instead of tracing a wrong shape.
    from opreg import _builtin_shapes
    monkeypatch.setitem(_builtin_shapes.SHAPES, "opreg::softmax", lambda x, dim=-1: [x.shape[:-1]])
    torch._dynamo.reset()
    with pytest.raises(Exception, match=r"\[opreg::softmax\] opreg.torch's symbolic shape .* "
                                         r"differs from the Meta kernel's"):
        torch.compile(_BUILTIN_CALLS["softmax"], fullgraph=True, backend="aot_eager")(
            torch.randn(4, 16))


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_a_cpp_functional_op_from_output_specs_compiles_once_for_dynamic_sizes(backend):
    # _opreg_test::widen is defined in C++ with Library::def_functional and an OutputSpec
    # (like x, last dim doubled), onto the vLLM-style out op widen_out: its torch fake takes
    # its shapes from the spec symbolically, so a batch size marked dynamic compiles one graph
    # with no Python fake (the Meta kernel still checks each trace).
    opreg._C._load_test_ops()
    assert opreg._C._output_specs("_opreg_test::widen") == [
        {"kind": "like", "args": ["x"], "dtype": None, "divide_last": 1, "multiply_last": 2,
         "last_from": None}]
    assert opreg._C._output_specs("_opreg_test::widen_out") is None
    widen = opreg_torch.to_torch_op("_opreg_test::widen")

    def f(x):
        return widen(x) + 1

    counter = torch._dynamo.testing.CompileCounterWithBackend(backend)
    g = torch.compile(f, fullgraph=True, backend=counter)
    for n in (2, 3, 5, 8):  # (torch specialises a size of 1)
        x = torch.randn(n, 8)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(g(x), torch.cat([x, 2 * x], dim=-1) + 1)
    assert counter.frame_count == 1
    no_graph_break()
