"""opreg.torch: opreg ops as torch ops (torch.ops.<ns>), under torch.compile (no graph break,
aot_eager and inductor), torch.library.opcheck on every built-in op, autograd, errors."""
import itertools

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
def test_every_opreg_op_is_a_torch_op():
    opreg_torch.sync()  # ops C++ registered since the import (other tests load some)
    names = opreg_torch.registered()
    for name in opreg.list_ops():
        assert name in names or name in opreg_torch.skipped(), name
    assert "opreg::rms_norm" in names and "opreg::add.out" in names
    x = torch.randn(4, 8)
    w = torch.rand(8) + 0.5
    y = torch.ops.opreg.rms_norm(x, w, 1e-6)
    torch.testing.assert_close(y, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)
    assert str(torch.ops.opreg.rms_norm.default._schema) == opreg.ops.opreg.rms_norm.default.schema


@needs_ops
def test_out_variant_returns_the_out_tensor():
    x = torch.randn(3, 5)
    out = torch.empty(3, 5)
    assert torch.ops.opreg.add.out(x, x, out=out) is out
    torch.testing.assert_close(out, 2 * x)
    q = torch.empty(3, 5, dtype=torch.int8)
    s = torch.empty(3, 1)
    rq, rs = torch.ops.opreg.per_token_quant.out(x, torch.int8, q=q, scale=s)
    assert rq is q and rs is s


def _compiled(fn, backend):
    counter = torch._dynamo.testing.CompileCounterWithBackend(backend)
    return torch.compile(fn, fullgraph=True, backend=counter), counter


@needs_ops
@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_compile_functional_in_place_and_out_forms(backend):
    w = torch.rand(8) + 0.5

    def f(x, residual):
        torch.ops.opreg.fused_add_rms_norm_(x, residual, w, 1e-6)  # in place
        y = torch.ops.opreg.rms_norm(residual, w, 1e-6)  # functional
        out = torch.empty_like(y)
        torch.ops.opreg.add.out(x, y, out=out)  # out form
        values, indices = torch.ops.opreg.topk(out, 2)  # multi-output
        return out * 2, values, indices

    x, r = torch.randn(4, 8), torch.randn(4, 8)
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


def _builtin_cases():
    x = torch.randn(4, 8)
    y = torch.randn(4, 8)
    w = torch.rand(8) + 0.5
    lw = torch.randn(16, 8)
    lb = torch.randn(16)
    g = torch.randn(4, 16)
    e = torch.empty
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
def test_opcheck_every_builtin_op():
    cases = _builtin_cases()
    builtin = [n for n in opreg.list_ops() if n.startswith("opreg::")]
    missing = sorted(set(builtin) - set(cases))
    assert not missing, f"built-in ops without an opcheck case: {missing}"
    for name in builtin:
        args, kwargs = cases[name]
        result = opreg.opcheck(name, args, kwargs)
        assert set(result.values()) == {"SUCCESS"}, (name, result)


def _scale_library():
    ns = f"bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("scale(Tensor x, float a) -> Tensor")
    lib.impl("scale", lambda x, a: np.asarray(x) * a, "CPU")
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


def test_autograd_through_a_user_op():
    ns, lib = _scale_library()

    def setup_context(ctx, inputs, output):
        ctx.a = inputs[1]

    def backward(ctx, grad):
        return grad * ctx.a, None

    opreg.register_autograd(f"{ns}::scale", backward, setup_context=setup_context)
    x = torch.randn(5, requires_grad=True)
    y = getattr(torch.ops, ns).scale(x, 3.0)
    y.sum().backward()
    torch.testing.assert_close(x.grad, torch.full((5,), 3.0))
    # torch.library.opcheck agrees with the registration (gradients included).
    result = opreg.opcheck(f"{ns}::scale", (torch.randn(3, requires_grad=True), 2.0))
    assert set(result.values()) == {"SUCCESS"}, result
    lib._destroy()


@needs_ops
def test_no_backward_raises_torchs_error():
    x = torch.randn(3, requires_grad=True)
    y = torch.ops.opreg.add(x, x)
    with pytest.raises(RuntimeError, match=r"Trying to backward through opreg::add but no "
                                           r"autograd formula was registered"):
        y.sum().backward()


@needs_ops
def test_torch_op_errors_name_op_and_argument():
    with pytest.raises(TypeError, match=r"\[opreg::rms_norm\] argument 'input' \(#0\): "
                                        r"expected dtype f32, f16 or bf16, got i64"):
        torch.ops.opreg.rms_norm(torch.ones(2, 4, dtype=torch.int64), torch.ones(4), 1e-6)


def test_names_torch_already_has_are_skipped_with_a_reason():
    for name, why in opreg_torch.skipped().items():
        assert why, name
    if "symm_mem::one_shot_all_reduce" in opreg.list_ops():
        assert "torch already has" in opreg_torch.skipped()["symm_mem::one_shot_all_reduce"]
