"""opreg.torch: opreg ops as torch ops (torch.ops.<ns>), under torch.compile (no graph break,
aot_eager and inductor), torch.library.opcheck on every built-in op, autograd, errors."""
import builtins
import itertools
import warnings

import numpy as np
import pytest

import opreg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")
from torch_test_util import fresh_dynamo, needs_ops, no_graph_break  # noqa: E402,F401

import opreg.torch as opreg_torch  # noqa: E402

_ns = itertools.count()


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
    no_graph_break()


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
    no_graph_break()
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
    old_default = op.default
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 2.0))
    lib._destroy()
    lib = opreg.Library(ns, "DEF")
    with opreg_torch._records.RECORDS.lock:
        lib._c().define("redef(Tensor x, Tensor y) -> Tensor", [], __file__, 1)  # as C++ would
        lib.impl("redef", lambda x, y: np.asarray(x) + np.asarray(y), "CPU")
        expected = rf"\[{ns}::redef\] argument 'y' \(#1\): expected a value, got nothing"
        with pytest.raises((RuntimeError, TypeError), match=expected):
            op(torch.ones(2))
    # torch deleted its op to define the new schema: the op object fetched before raises (torch
    # would call into the freed op: a crash), and a new one has the new schema.
    with pytest.raises(RuntimeError, match=rf"\[{ns}::redef\] this torch op object was fetched "
                                           rf"before the op was redefined or removed"):
        op(torch.ones(2), torch.ones(2))
    with pytest.raises(RuntimeError, match="was fetched before the op was redefined"):
        old_default(torch.ones(2))
    op = getattr(getattr(torch.ops, ns), "redef")
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
def test_no_backward_gives_torchs_fallback_warning(device):
    # An op without register_autograd has no autograd kernel (no Python frame on its call path):
    # torch's C++ fallback warns when a backward reaches it, as for a native TORCH_LIBRARY op.
    x = torch.randn(3, requires_grad=True, device=device)
    y = torch.ops.opreg.add(x, x)
    assert not torch._C._dispatch_has_kernel_for_dispatch_key("opreg::add", "Autograd")
    with pytest.warns(UserWarning, match=r"opreg::add: an autograd kernel was not registered to "
                                         r"the Autograd key\(s\)"):
        y.sum().backward()
    assert x.grad is None


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
    opreg_torch._registration.unregister(qualified)  # as if torch had not heard of it yet
    assert qualified not in opreg_torch.registered()
    with opreg_torch._records.RECORDS.lock:
        opreg_torch._registration.on_op_event("defined", qualified)
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

    monkeypatch.setattr(opreg_torch._registration, "sync_kernels", broken)
    lib = opreg.Library(ns, "DEF")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: np.asarray(x) * 2, "CPU")
    assert "kernels refused" in opreg_torch.skipped()[qualified]
    assert not opreg_torch._registration.torch_has(qualified)
    monkeypatch.undo()
    opreg_torch._registration.on_op_event("defined", qualified)
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


def test_opreg_torch_takes_the_torch_op_itself(ns):
    # As torch.library's functions do.
    lib = opreg.Library(ns, "DEF")
    lib.define("e(Tensor x) -> Tensor")
    torch_op = getattr(torch.ops, ns).e.default
    assert opreg_torch.to_torch_op(torch_op) is torch_op
    opreg_torch.register_fake(torch_op, lambda x: torch.empty_like(x))
    with pytest.raises(TypeError, match="expected an opreg op"):
        opreg_torch.to_torch_op(object())
    assert not [k for k in opreg_torch.skipped() if k.startswith(ns)]
    lib._destroy()
