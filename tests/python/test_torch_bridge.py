"""opreg.torch: opreg ops as torch ops (torch.ops.<ns>), under torch.compile (no graph break,
aot_eager and inductor), torch.library.opcheck on every built-in op, autograd, errors."""
import builtins
import itertools
import warnings

import numpy as np
import pytest

import opreg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
import torch._dynamo.testing  # noqa: E402

import opreg.torch as opreg_torch  # noqa: E402

needs_ops = pytest.mark.skipif("opreg::add" not in opreg.list_ops(),
                               reason="opreg::ops not linked in this build")
_ns = itertools.count()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield
    torch._dynamo.reset()


def _no_graph_break():
    breaks = dict(torch._dynamo.utils.counters["graph_break"])
    assert breaks == {}, breaks


@needs_ops
def test_every_opreg_op_is_a_torch_op(device):
    opreg_torch.sync()  # ops C++ registered since the import (other tests load some)
    names = opreg_torch.registered()
    for name in opreg.list_ops():
        assert name in names or name in opreg_torch.skipped(), name
    assert "opreg::rms_norm" in names and "opreg::add.out" in names
    x = torch.randn(4, 8, device=device)
    w = torch.rand(8, device=device) + 0.5
    y = torch.ops.opreg.rms_norm(x, w, 1e-6)
    assert y.device == x.device
    torch.testing.assert_close(y, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)
    assert str(torch.ops.opreg.rms_norm.default._schema) == opreg.ops.opreg.rms_norm.default.schema


@needs_ops
@pytest.mark.parametrize("ops", ["torch.ops", "opreg.ops"])
def test_out_variant_returns_the_out_tensor(ops, device):
    # Through torch.ops and opreg.ops alike, an out variant returns the very `out` objects.
    namespace = (torch.ops if ops == "torch.ops" else opreg.ops).opreg
    x = torch.randn(3, 5, device=device)
    out = torch.empty(3, 5, device=device)
    assert namespace.add.out(x, x, out=out) is out
    torch.testing.assert_close(out, 2 * x)
    q = torch.empty(3, 5, dtype=torch.int8, device=device)
    s = torch.empty(3, 1, device=device)
    rq, rs = namespace.per_token_quant.out(x, torch.int8, q=q, scale=s)
    assert rq is q and rs is s


def _compiled(fn, backend):
    counter = torch._dynamo.testing.CompileCounterWithBackend(backend)
    return torch.compile(fn, fullgraph=True, backend=counter), counter


@needs_ops
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_functional_in_place_and_out_forms(backend, device):
    w = torch.rand(8, device=device) + 0.5

    def f(x, residual):
        torch.ops.opreg.fused_add_rms_norm_(x, residual, w, 1e-6)  # in place
        y = torch.ops.opreg.rms_norm(residual, w, 1e-6)  # functional
        out = torch.empty_like(y)
        torch.ops.opreg.add.out(x, y, out=out)  # out form
        values, indices = torch.ops.opreg.topk(out, 2)  # multi-output
        return out * 2, values, indices

    x, r = torch.randn(4, 8, device=device), torch.randn(4, 8, device=device)
    xe, re_ = x.clone(), r.clone()
    expect = f(xe, re_)
    g, counter = _compiled(f, backend)
    got = g(x, r)
    for a, b in zip(got, expect):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(x, xe)  # the in-place op's writes reach the caller's tensors
    torch.testing.assert_close(r, re_)
    assert counter.frame_count == 1
    _no_graph_break()


def _builtin_cases(device="cpu"):
    x = torch.randn(4, 8, device=device)
    y = torch.randn(4, 8, device=device)
    w = torch.rand(8, device=device) + 0.5
    lw = torch.randn(16, 8, device=device)
    lb = torch.randn(16, device=device)
    g = torch.randn(4, 16, device=device)

    def e(*shape, dtype=torch.float32):
        return torch.empty(*shape, dtype=dtype, device=device)

    return {
        "opreg::add": ((x, y), {}),
        "opreg::add.out": ((x, y), {"out": e(4, 8)}),
        "opreg::mul": ((x, y), {}),
        "opreg::mul.out": ((x, y), {"out": e(4, 8)}),
        "opreg::fused_add_rms_norm_": ((x.clone(), y.clone(), w, 1e-6), {}),
        "opreg::linear": ((x, lw, lb), {}),
        "opreg::linear.out": ((x, lw, lb), {"out": e(4, 16)}),
        "opreg::per_token_quant": ((x, torch.int8), {}),
        "opreg::per_token_quant.out": ((x, torch.int8),
                                       {"q": e(4, 8, dtype=torch.int8), "scale": e(4, 1)}),
        "opreg::rms_norm": ((x, w, 1e-6), {}),
        "opreg::rms_norm.out": ((x, w, 1e-6), {"out": e(4, 8)}),
        "opreg::silu_and_mul": ((g,), {}),
        "opreg::silu_and_mul.out": ((g,), {"out": e(4, 8)}),
        "opreg::softmax": ((x, -1), {}),
        "opreg::softmax.out": ((x, -1), {"out": e(4, 8)}),
        "opreg::split_add": ((x, y), {}),
        "opreg::split_add.out": ((x, y), {"out0": e(4, 8), "out1": e(4, 8)}),
        "opreg::topk": ((x, 3), {}),
        "opreg::topk.out": ((x, 3), {"values": e(4, 3), "indices": e(4, 3, dtype=torch.int64)}),
    }


@needs_ops
def test_opcheck_every_builtin_op(device):
    cases = _builtin_cases(device)
    builtin = [n for n in opreg.list_ops() if n.startswith("opreg::")]
    missing = sorted(set(builtin) - set(cases))
    assert not missing, f"built-in ops without an opcheck case: {missing}"
    for name in builtin:
        args, kwargs = cases[name]
        result = opreg.opcheck(name, args, kwargs)
        assert set(result.values()) == {"SUCCESS"}, (name, result)


def _scale_library(device="cpu"):
    ns = f"bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("scale(Tensor x, float a) -> Tensor")
    if device == "cpu":
        lib.impl("scale", lambda x, a: np.asarray(x) * a, "CPU")
    else:  # a Python kernel may compute with torch and return its tensor
        lib.impl("scale", lambda x, a: torch.from_dlpack(x) * a, "CUDA")
    lib.register_fake("scale", lambda x, a: x.new_empty(x.shape))
    return ns, lib


def test_ops_defined_later_from_python_are_torch_ops_and_compile():
    ns, lib = _scale_library()
    op = getattr(getattr(torch.ops, ns), "scale")
    torch.testing.assert_close(op(torch.ones(3), 4.0), torch.full((3,), 4.0))
    g, counter = _compiled(lambda x: op(x, 2.0) + 1, "aot_eager")
    torch.testing.assert_close(g(torch.ones(2)), torch.full((2,), 3.0))
    assert counter.frame_count == 1
    _no_graph_break()
    lib._destroy()


def test_an_op_redefined_by_cpp_code_is_followed_and_checked_until_then():
    # C++ code redefines the op. Until opreg.torch hears of it (here: while it is busy), the
    # torch op keeps the kernel and schema it was given first, and opreg checks each call
    # against the op's current definition, so a call made for the old schema is an error, not
    # a misread stack. Once heard of, the torch op has the new schema.
    ns = f"bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("redef(Tensor x) -> Tensor")
    lib.impl("redef", lambda x: np.asarray(x) * 2, "CPU")
    op = getattr(getattr(torch.ops, ns), "redef")
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 2.0))
    lib._destroy()
    lib = opreg.Library(ns, "DEF")
    with opreg_torch._lock:
        lib._c().define("redef(Tensor x, Tensor y) -> Tensor", [], __file__, 1)  # as C++ would
        lib.impl("redef", lambda x, y: np.asarray(x) + np.asarray(y), "CPU")
        expected = rf"\[{ns}::redef\] argument 'y' \(#1\): expected a value, got nothing"
        with pytest.raises((RuntimeError, TypeError), match=expected):
            op(torch.ones(2))
    with pytest.raises(RuntimeError, match="missing value for argument 'y'"):
        op(torch.ones(2))
    torch.testing.assert_close(op(torch.ones(2), torch.ones(2)), torch.full((2,), 2.0))
    lib._destroy()


def test_autograd_through_a_user_op(device):
    ns, lib = _scale_library(device)

    def setup_context(ctx, inputs, output):
        ctx.a = inputs[1]

    def backward(ctx, grad):
        return grad * ctx.a, None

    opreg.register_autograd(f"{ns}::scale", backward, setup_context=setup_context)
    x = torch.randn(5, requires_grad=True, device=device)
    y = getattr(torch.ops, ns).scale(x, 3.0)
    assert y.device == x.device
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((5,), 3.0, device=device))
    # torch.library.opcheck agrees with the registration (gradients included).
    result = opreg.opcheck(f"{ns}::scale",
                           (torch.randn(3, requires_grad=True, device=device), 2.0))
    assert set(result.values()) == {"SUCCESS"}, result
    lib._destroy()


def test_custom_op_def_register_autograd():
    # torch's CustomOpDef.register_autograd, on an opreg.custom_op.
    ns = f"bridge_ns{next(_ns)}"

    @opreg.custom_op(f"{ns}::cube", mutates_args=())
    def cube(x: opreg.Tensor) -> opreg.Tensor:
        return np.asarray(x) ** 3

    @cube.register_fake
    def _(x):
        return opreg.empty_like(x)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x * x

    cube.register_autograd(backward, setup_context=setup_context)
    x = torch.tensor([1.0, 2.0, -3.0], requires_grad=True)
    getattr(torch.ops, ns).cube(x).sum().backward()
    torch.testing.assert_close(x.grad, 3 * x.detach() ** 2)
    # Called directly with torch tensors, it is the torch op, as torch's custom ops are:
    # gradients flow and torch.compile traces it; NumPy arguments still take opreg.ops.
    x.grad = None
    (cube(x).sum() + x.sum()).backward()
    torch.testing.assert_close(x.grad, 3 * x.detach() ** 2 + 1)
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(lambda t: cube(t) * 2, fullgraph=True, backend=counter)
    torch.testing.assert_close(compiled(torch.ones(3)), torch.full((3,), 2.0))
    assert counter.frame_count == 1
    np.testing.assert_array_equal(np.asarray(cube(np.arange(3.0))), np.arange(3.0) ** 3)
    cube._destroy()


def test_a_mutating_custom_op_bumps_version_counters():
    # As torch.library.custom_op's: autograd then refuses a backward that would read a tensor
    # the op overwrote, rather than computing a wrong gradient; compile and opcheck still pass.
    ns = f"bridge_ns{next(_ns)}"

    @opreg.custom_op(f"{ns}::add_one_", mutates_args=("x",))
    def add_one_(x: opreg.Tensor) -> None:
        np.asarray(x)[...] += 1

    for call in (getattr(torch.ops, ns).add_one_, add_one_):
        x = torch.randn(3, requires_grad=True)
        y = x * 1
        z = y.sin()  # saves y for its backward
        before = y._version
        call(y)
        assert y._version > before
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()

    def f(t):
        t = t.clone()
        add_one_(t)
        return t

    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    torch.testing.assert_close(torch.compile(f, fullgraph=True, backend=counter)(torch.zeros(2)),
                               torch.ones(2))
    assert counter.frame_count == 1
    result = opreg.opcheck(f"{ns}::add_one_", (torch.zeros(3),))
    assert set(result.values()) == {"SUCCESS"}, result
    add_one_._destroy()


@needs_ops
def test_no_backward_raises_torchs_error(device):
    x = torch.randn(3, requires_grad=True, device=device)
    y = torch.ops.opreg.add(x, x)
    with pytest.raises(RuntimeError, match=r"Trying to backward through opreg::add but no "
                                           r"autograd formula was registered"):
        y.sum().backward()


_KINDS = ["RuntimeError", "ValueError", "TypeError", "IndexError", "KeyError",
          "NotImplementedError"]  # opreg's ErrorKind numbers, in order


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
@pytest.mark.parametrize("kind", range(len(_KINDS)))
def test_cpp_error_kind_is_kept_through_torch_ops(kind, mode):
    # A C++ kernel's error kind reaches Python as the exception libtorch would raise
    # (TORCH_CHECK_NOT_IMPLEMENTED is NotImplementedError), through the C bridge whether or not
    # the Python autograd kernel is in front of it.
    opreg_torch.to_torch_op("_opreg_test::raise_error")
    assert "_opreg_test::raise_error" not in opreg_torch.python_kernels()
    exc = getattr(builtins, _KINDS[kind])
    context = {"grad": torch.enable_grad, "no_grad": torch.no_grad,
               "inference_mode": torch.inference_mode}[mode]
    with context(), pytest.raises(exc, match=f"raise_error: asked for {_KINDS[kind]}") as info:
        torch.ops._opreg_test.raise_error(torch.ones(2), kind)
    assert type(info.value) is exc


@needs_ops
def test_torch_op_errors_name_op_and_argument(device):
    # The TypeError of the C++ argument check stays a TypeError through torch.ops.
    with pytest.raises(TypeError,
                       match=r"\[opreg::rms_norm\] argument 'input' \(#0\): "
                             r"expected dtype f32, f16 or bf16, got i64"):
        torch.ops.opreg.rms_norm(torch.ones(2, 4, dtype=torch.int64, device=device),
                                 torch.ones(4, device=device), 1e-6)


@needs_ops
def test_none_for_a_tensor_through_torch_ops_names_op_and_argument():
    # torch.ops passes None for a `Tensor` as an undefined tensor; the C++ kernel says so.
    with pytest.raises(TypeError,
                       match=r"\[opreg::rms_norm\] argument 'input' \(#0\): expected Tensor, "
                             r"got None"):
        torch.ops.opreg.rms_norm(None, torch.ones(4), 1e-6)


def _silu_and_mul_library(meta_kernel, kernel_key="CPU"):
    """A vLLM-style op: writes its result into `out`, returns nothing, one real kernel for
    `kernel_key` (and a Meta kernel that checks the shapes when `meta_kernel`). The real kernel
    records the device of every call it gets, in `lib.seen`."""
    ns = f"bridge_ns{next(_ns)}"
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
    _no_graph_break()
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
    ns = f"bridge_ns{next(_ns)}"
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
    ns = f"bridge_ns{next(_ns)}"
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
    _no_graph_break()
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
    _no_graph_break()


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


def test_an_op_defined_again_with_another_schema_is_redefined_in_torch():
    # A Library destroyed and its ops defined again differently (a pytest fixture, a module
    # reloaded): the torch ops follow the new schemas and kernels, in-place forms included.
    ns = f"bridge_ns{next(_ns)}"

    def define(default, extra):
        lib = opreg.Library(ns, "DEF")
        lib.define(f"scale(Tensor x, float a={default}{extra}) -> Tensor")
        lib.define(f"scale_(Tensor(a!) x, float a={default}) -> Tensor(a!)")
        lib.impl("scale", lambda x, a, *rest: np.asarray(x) * a, "CPU")
        lib.impl("scale", lambda x, a, *rest: opreg.empty_like(x), "Meta")

        def scale_(x, a):
            np.asarray(x)[...] *= a
            return x

        lib.impl("scale_", scale_, "CPU")
        return lib

    lib = define("1.0", "")
    x = torch.ones(3)
    assert getattr(torch.ops, ns).scale(x).tolist() == [1.0] * 3
    lib._destroy()
    lib = define("5.0", ", int k=0")
    ops = getattr(torch.ops, ns)
    assert "float a=5., int k=0" in str(ops.scale.default._schema)
    assert ops.scale(x).tolist() == [5.0] * 3
    assert ops.scale(x, 2.0, 1).tolist() == [2.0] * 3
    y = torch.ones(3)
    assert ops.scale_(y) is y and y.tolist() == [5.0] * 3
    compiled = torch.compile(lambda x: ops.scale(x) + 1, fullgraph=True, backend="aot_eager")
    assert compiled(x).tolist() == [6.0] * 3
    assert f"{ns}::scale" in opreg_torch.registered()
    lib._destroy()


def test_ops_heard_of_while_opreg_torch_registers_are_registered_as_it_finishes():
    # The define callback runs at any bytecode boundary of the main thread, also inside
    # opreg.torch's own registration code: there it leaves the names for the lock's release.
    ns = f"bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: np.asarray(x) * 2, "CPU")
    qualified = f"{ns}::f"
    opreg_torch._unregister(qualified)  # as if torch had not heard of it yet
    assert qualified not in opreg_torch.registered()
    with opreg_torch._lock:
        opreg_torch._on_cpp_define([qualified])
        assert qualified not in opreg_torch.registered()
    assert qualified in opreg_torch.registered()
    assert getattr(torch.ops, ns).f(torch.ones(2)).tolist() == [2.0, 2.0]
    lib._destroy()


def test_a_failed_registration_leaves_no_half_made_torch_op(monkeypatch):
    # A failure after torch took the schema (here: registering the kernels) undoes the
    # definition, so the op is not blocked as "torch already has an op of this name" later.
    ns = f"bridge_ns{next(_ns)}"
    qualified = f"{ns}::f"

    def broken(*args, **kwargs):
        raise RuntimeError("kernels refused")

    monkeypatch.setattr(opreg_torch, "_register_kernels", broken)
    lib = opreg.Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: np.asarray(x) * 2, "CPU")
    assert "kernels refused" in opreg_torch.skipped()[qualified]
    assert not opreg_torch._torch_has(qualified)
    monkeypatch.undo()
    opreg_torch._on_define(qualified)
    assert qualified in opreg_torch.registered()
    assert getattr(torch.ops, ns).f(torch.ones(2)).tolist() == [2.0, 2.0]
    lib._destroy()


def test_opcheck_flags_a_kernel_that_returns_its_input():
    # The kernel's result is the argument's own torch tensor, as a libtorch kernel's would be,
    # so torch sees the alias the schema does not declare, as it does for torch.library ops.
    ns = f"bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("same(Tensor x) -> Tensor")
    lib.impl("same", lambda x: x, "CPU")
    lib.impl("same", lambda x: opreg.empty_like(x), "Meta")
    if f"{ns}::same" in opreg_torch.python_kernels():
        lib._destroy()
        pytest.skip("the op has a Python kernel here (torch < 2.11, or OPREG_TORCH_PYTHON_KERNELS)")
    x = torch.randn(4)
    assert getattr(torch.ops, ns).same(x) is x
    with warnings.catch_warnings():  # torch may warn about the alias too (once per process)
        warnings.simplefilter("ignore", UserWarning)
        result = opreg.opcheck(f"{ns}::same", (x,), raise_exception=False)
    assert "not defined to alias output but was aliasing" in str(result["test_schema"])
    lib._destroy()


def test_a_skipped_name_is_tried_again_when_defined_again():
    # Skipped while torch had an op of that name; defined again once torch's is gone, it is
    # registered.
    ns = f"bridge_ns{next(_ns)}"
    torch_lib = torch.library.Library(ns, "DEF")
    torch_lib.define("taken(Tensor x) -> Tensor")
    lib = opreg.Library(ns, "DEF")
    lib.define("taken(Tensor x) -> Tensor")
    assert "torch already has" in opreg_torch.skipped()[f"{ns}::taken"]
    torch_lib._destroy()
    lib._destroy()
    lib = opreg.Library(ns, "DEF")
    lib.define("taken(Tensor x) -> Tensor")
    lib.impl("taken", lambda x: np.asarray(x) * 2, "CPU")
    assert f"{ns}::taken" not in opreg_torch.skipped()
    assert getattr(torch.ops, ns).taken(torch.ones(2)).tolist() == [2.0, 2.0]
    lib._destroy()


def test_names_torch_already_has_are_skipped_with_a_reason():
    for name, why in opreg_torch.skipped().items():
        assert why, name
    if "symm_mem::one_shot_all_reduce" in opreg.list_ops():
        assert "torch already has" in opreg_torch.skipped()["symm_mem::one_shot_all_reduce"]


def _torch_has_stable_from_blob():
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 11)


@needs_ops
def test_builtin_ops_get_cpp_kernels_where_torch_allows():
    why_not = opreg_torch._c_bridge_unavailable
    if not _torch_has_stable_from_blob():
        assert "2.11" in why_not, why_not
        return
    if why_not == "OPREG_TORCH_PYTHON_KERNELS=1":
        pytest.skip("OPREG_TORCH_PYTHON_KERNELS=1 forces Python kernels")
    assert why_not == ""
    python = opreg_torch.python_kernels()
    for name in ("opreg::rms_norm", "opreg::linear", "opreg::topk", "opreg::per_token_quant"):
        assert name not in python, (name, python[name])
    for name, why in python.items():
        assert why, name
    # Scalar is not in torch's stable C ABI: opreg::add (Scalar alpha) keeps a Python kernel.
    assert "Scalar" in python["opreg::add"]


_AGREE_SCRIPT = r"""
import sys, torch, opreg, opreg.torch
g = torch.Generator().manual_seed(0)
x = torch.randn(5, 16, generator=g)
w = torch.rand(16, generator=g) + 0.5
b = torch.randn(7, 16, generator=g)
outs = {
    "rms_norm": torch.ops.opreg.rms_norm(x, w, 1e-6),
    "linear": torch.ops.opreg.linear(x, b, None),
    "silu_and_mul": torch.ops.opreg.silu_and_mul(torch.cat([x, x * 2], -1)),
    "softmax": torch.ops.opreg.softmax(x, -1),
    "topk": torch.ops.opreg.topk(x, 3, -1),
    "per_token_quant": torch.ops.opreg.per_token_quant(x, torch.int8),
    "split_add": torch.ops.opreg.split_add(x, x),
    "add": torch.ops.opreg.add(x, x, alpha=2),
}
inplace = x.clone()
residual = x.clone() * 3
torch.ops.opreg.fused_add_rms_norm_(inplace, residual, w, 1e-6)
outs["fused_add_rms_norm_"] = (inplace, residual)
outs["python_kernels"] = sorted(opreg.torch.python_kernels())
torch.save(outs, sys.argv[1])
"""


@needs_ops
def test_cpp_and_python_kernels_agree(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "agree.py"
    script.write_text(_AGREE_SCRIPT)
    results = {}
    for mode in ("cpp", "python"):
        env = dict(os.environ)
        env.pop("OPREG_TORCH_PYTHON_KERNELS", None)
        if mode == "python":
            env["OPREG_TORCH_PYTHON_KERNELS"] = "1"
        out = tmp_path / f"{mode}.pt"
        subprocess.run([sys.executable, str(script), str(out)], env=env, check=True, timeout=300)
        results[mode] = torch.load(out)
    cpp, python = results["cpp"], results["python"]
    if _torch_has_stable_from_blob():
        assert "opreg::rms_norm" not in cpp["python_kernels"]
    assert "opreg::rms_norm" in python["python_kernels"]
    for name in cpp:
        if name != "python_kernels":
            torch.testing.assert_close(cpp[name], python[name], rtol=0, atol=0, msg=name)


def _mix_library():
    ns = f"bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("mix(Tensor x, Tensor? y=None, int? k=None, float s=1.0, bool flag=False, "
               "ScalarType? dt=None, SymInt n=0) -> (Tensor, int, float, bool, ScalarType)")

    def mix(x, y, k, s, flag, dt, n):
        out = np.asarray(x) * s + (np.asarray(y) if y is not None else 0) + n
        return out, -1 if k is None else 2 * k, s / 2, not flag, 5 if dt is None else dt

    lib.impl("mix", mix, "CPU")
    lib.register_fake("mix", lambda x, *rest: (x.new_empty(x.shape), 0, 0.0, False, 0))
    return ns, lib


def test_every_value_kind_crosses_the_cpp_bridge():
    ns, lib = _mix_library()
    op = getattr(getattr(torch.ops, ns), "mix")
    if _torch_has_stable_from_blob() and not opreg_torch._c_bridge_unavailable:
        assert f"{ns}::mix" not in opreg_torch.python_kernels()
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t, k, s, flag, dt = op(x)
    torch.testing.assert_close(t, x)
    # torch.ops returns a ScalarType as its code, as for aten ops (aten::result_type: 6).
    assert (k, s, flag, dt) == (-1, 0.5, True, 5)
    y = torch.ones(2, 3)
    t, k, s, flag, dt = op(x, y, 4, 3.0, True, torch.bfloat16, 10)
    torch.testing.assert_close(t, x * 3 + 1 + 10)
    assert (k, s, flag, dt) == (8, 1.5, False, 15)  # bfloat16's code
    # A non-contiguous view keeps its strides; the result owns fresh memory.
    v = x.t()
    t, *_ = op(v, None, None, 2.0)
    torch.testing.assert_close(t, v * 2)
    with pytest.raises((TypeError, ValueError, RuntimeError),
                       match=rf"\[{ns}::mix\] argument 'x' \(#0\)"):
        op(torch.ones(2, dtype=torch.complex64))
    lib._destroy()


@needs_ops
def test_cpp_bridge_calls_from_several_threads():
    # torch releases the GIL around the op; the bridge takes it back once to give back a call's
    # tensor arguments. Threads racing for it must all finish, with right results and no
    # references left behind.
    import threading
    w = torch.rand(64) + 0.5
    lw, lb = torch.randn(16, 64), torch.randn(16)
    errors = []

    def work(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(8, 64, generator=g)
            uses = x._use_count()
            for _ in range(2000):
                y = torch.ops.opreg.linear(x, lw, lb)  # three tensor arguments
                r = x.clone()
                torch.ops.opreg.fused_add_rms_norm_(r, x.clone(), w, 1e-6)
            torch.testing.assert_close(y, torch.nn.functional.linear(x, lw, lb), rtol=1e-4,
                                       atol=1e-4)
            s = x + x
            torch.testing.assert_close(r, s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6)
                                       * w)
            assert x._use_count() == uses
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert not errors, errors
    assert w._use_count() == 1 and lw._use_count() == 1


@needs_ops
def test_cpp_bridge_keeps_no_references(device):
    x = torch.randn(8, 32, device=device)
    w = torch.rand(32, device=device) + 0.5
    bad = torch.ones(2, 4, dtype=torch.int64, device=device)
    live = opreg._C._torch_bridge_live_results()
    uses = (x._use_count(), w._use_count(), bad._use_count())
    for _ in range(100_000):
        y = torch.ops.opreg.rms_norm(x, w, 1e-6)
    y2 = torch.ops.opreg.topk(x, 2, -1)
    assert opreg._C._torch_bridge_live_results() >= live + (1 if "opreg::rms_norm" not in
                                                            opreg_torch.python_kernels() else 0)
    for _ in range(200):
        with pytest.raises((TypeError, RuntimeError)):
            torch.ops.opreg.rms_norm(bad, w, 1e-6)
    del y, y2
    assert opreg._C._torch_bridge_live_results() == live
    assert (x._use_count(), w._use_count(), bad._use_count()) == uses


@needs_ops
def test_cpp_bridge_reuses_argument_objects_but_never_a_kept_one():
    if "opreg::rms_norm" in opreg_torch.python_kernels():
        pytest.skip("this torch has no C bridge for opreg::rms_norm: "
                    + opreg_torch.python_kernels()["opreg::rms_norm"])
    x = torch.randn(4, 16)
    w = torch.rand(16) + 0.5
    torch.ops.opreg.rms_norm(x, w, 1e-6)
    cached = opreg._C._recycled_tensors_cached()
    assert cached >= 2
    # out= returns a tensor over the out argument's memory: that argument's object is kept.
    out = torch.zeros(4, 16)
    r = torch.ops.opreg.rms_norm.out(x, w, 1e-6, out=out)
    assert r.data_ptr() == out.data_ptr()
    expect = out.clone()
    del out
    for _ in range(10):
        torch.ops.opreg.rms_norm(torch.randn(4, 16), w, 1e-6)
    torch.testing.assert_close(r, expect)
    torch.testing.assert_close(r, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)


@needs_ops
def test_meta_and_cpu_tensors_together_are_refused_through_torch_ops():
    # torch picks the Meta kernel when any argument is a meta tensor; opreg's rule (one device
    # type per call) holds there too, as torch's own ops refuse the mix.
    m, c = torch.empty(3, device="meta"), torch.ones(3)
    with pytest.raises(RuntimeError, match=r"\[opreg::add\] expected every tensor on one device: "
                                           r"argument 'self' is on meta, argument 'other' on cpu"):
        torch.ops.opreg.add(m, c)
    assert torch.ops.opreg.add(m, m).device.type == "meta"
