"""A Python CompositeImplicit kernel given to opreg.Library.impl is the op's
CompositeImplicitAutograd kernel in torch, as torch.library's is: torch.ops calls decompose into
the ops it calls, so gradients flow through them, meta tensors and FakeTensor tracing go
through it, and torch.compile traces it with dynamic sizes. opreg keeps its own kernels in
torch only for the backends where the op has one of its own."""
import gc
import threading
import warnings

import numpy as np
import pytest

import opreg
from opreg import _op_events

torch = pytest.importorskip("torch")
import opreg.torch  # noqa: E402  (needs torch)


def _has_cia(qualified):
    return torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CompositeImplicitAutograd")


def _has_cpu(qualified):
    return torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CPU")


def _sin_times(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * y


def test_gradients_flow_through_a_torch_style_composite(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("f(Tensor x, Tensor y) -> Tensor")
    lib.impl("f", _sin_times, "CompositeImplicit")
    op = getattr(torch.ops, ns).f
    assert _has_cia(f"{ns}::f") and not _has_cpu(f"{ns}::f")

    x = torch.randn(5, requires_grad=True)
    y = torch.randn(5, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the autograd fallback's warning would be an error
        op(x, y).sum().backward()
    torch.testing.assert_close(x.grad, torch.cos(x.detach()) * y.detach())
    torch.testing.assert_close(y.grad, torch.sin(x.detach()))

    # Meta tensors decompose too (no fake needed), and so does every mode.
    m = op(torch.empty(3, 4, device="meta"), torch.empty(3, 4, device="meta"))
    assert m.device.type == "meta" and m.shape == (3, 4)
    with torch.inference_mode():
        torch.testing.assert_close(op(x.detach(), y.detach()), _sin_times(x, y).detach())

    # opreg's own calls run the same function, given torch values (its annotations ask for them).
    a, b = np.arange(4, dtype=np.float32), np.full(4, 2, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(getattr(opreg.ops, ns).f(a, b)), np.sin(a) * b,
                               rtol=1e-6)
    lib._destroy()


def test_an_unannotated_composite_gets_torch_tensors_from_torch(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("g(Tensor x, float alpha) -> Tensor")
    seen = []

    def g(x, alpha):
        seen.append(type(x))
        return x * x * alpha

    lib.impl("g", g, "CompositeImplicitAutograd")
    x = torch.randn(4, requires_grad=True)
    getattr(torch.ops, ns).g(x, 3.0).sum().backward()
    assert seen == [torch.Tensor]
    torch.testing.assert_close(x.grad, 6 * x.detach())
    lib._destroy()


def test_compiles_once_for_four_batch_sizes(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("h(Tensor x, Tensor w) -> Tensor")
    lib.impl("h", lambda x, w: torch.nn.functional.silu(x) * w, "CompositeImplicit")
    op = getattr(torch.ops, ns).h
    frames = []

    def backend(gm, example_inputs):
        frames.append(gm)
        return gm.forward

    fn = torch.compile(lambda x, w: op(x, w) + 1, backend=backend, fullgraph=True)
    w = torch.randn(8)
    for batch in (2, 3, 4, 5):
        x = torch.randn(batch, 8)
        torch._dynamo.mark_dynamic(x, 0)
        torch.testing.assert_close(fn(x, w), torch.nn.functional.silu(x) * w + 1)
    assert len(frames) == 1
    torch._dynamo.reset()
    lib._destroy()


def test_a_backend_kernel_beside_it_keeps_that_backend(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("k(Tensor x) -> Tensor")
    lib.impl("k", lambda x: np.asarray(x) * 10, "CPU")  # opreg's own CPU kernel
    lib.impl("k", lambda x: x * 2, "CompositeImplicit")
    q = f"{ns}::k"
    assert _has_cia(q) and _has_cpu(q)  # torch prefers the backend's kernel, as opreg does
    x = torch.ones(3)
    torch.testing.assert_close(getattr(torch.ops, ns).k(x), torch.full((3,), 10.0))
    assert getattr(torch.ops, ns).k(torch.empty(2, device="meta")).shape == (2,)  # decomposes
    lib._destroy()


def test_kernels_follow_the_composite_as_it_comes_and_goes(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("s(Tensor x) -> Tensor")
    q = f"{ns}::s"
    assert not _has_cia(q) and _has_cpu(q)
    impl_lib = opreg.Library(ns, "FRAGMENT")
    impl_lib.impl("s", lambda x: x * 3, "CompositeImplicit")
    assert _has_cia(q) and not _has_cpu(q)
    op = getattr(torch.ops, ns).s  # kept across the changes, as a caller would
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 3.0))

    # A newer composite serves at once, and the older one again once the newer one is gone.
    newer = opreg.Library(ns, "FRAGMENT")
    newer.impl("s", lambda x: x * 5, "CompositeImplicit")
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 5.0))
    newer._destroy()
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 3.0))

    impl_lib._destroy()
    assert not _has_cia(q) and _has_cpu(q)  # opreg's kernels again, for every backend
    lib.impl("s", lambda x: np.asarray(x) + 1, "CPU")
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 2.0))

    # A garbage-collected Library's composite goes at the next bytecode boundary.
    def add_composite():
        opreg.Library(ns, "FRAGMENT").impl("s", lambda x: x * 7, "CompositeImplicit")

    add_composite()
    gc.collect()
    _op_events.deliver()
    assert not _has_cia(q)
    torch.testing.assert_close(op(torch.ones(2)), torch.full((2,), 2.0))
    lib._destroy()


def _opreg_typed(factor):
    """A kernel written for opreg values (annotated with opreg.Tensor)."""

    def times(x: opreg.Tensor) -> opreg.Tensor:
        return np.asarray(x) * factor

    return times


def test_an_opreg_typed_composite_keeps_opregs_kernels(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("t(Tensor x) -> Tensor")
    t = _opreg_typed(4)
    lib.impl("t", t, "CompositeImplicit")
    q = f"{ns}::t"
    assert not _has_cia(q) and _has_cpu(q)
    torch.testing.assert_close(getattr(torch.ops, ns).t(torch.ones(2)), torch.full((2,), 4.0))
    assert _op_events.COMPOSITES[q] == [(t, False)]  # opreg runs it; torch follows opreg
    lib._destroy()


def test_register_fake_on_a_composite_op_says_torch_takes_none(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("u(Tensor x) -> Tensor")
    lib.impl("u", lambda x: x + 1, "CompositeImplicit")
    with pytest.raises(RuntimeError, match="CompositeImplicitAutograd kernel"):
        opreg.torch.register_fake(f"{ns}::u", lambda x: torch.empty_like(x))
    assert "decomposes it" in opreg.torch.skipped()[f"{ns}::u (fake)"]
    lib._destroy()


def test_opcheck_passes_on_a_composite_op(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("v(Tensor x, Tensor y) -> Tensor")
    lib.impl("v", _sin_times, "CompositeImplicit")
    x, y = torch.randn(3, requires_grad=True), torch.randn(3)
    result = opreg.opcheck(getattr(opreg.ops, ns).v.default, (x, y))
    assert set(result.values()) == {"SUCCESS"}
    lib._destroy()


def test_followers_hear_of_composite_changes(ns):
    heard = []
    sub = _op_events.subscribe(lambda kind, name: heard.append((kind, name)) if
                               name.startswith(ns) else None, replay=False)
    try:
        lib = opreg.Library(ns, "DEF")
        lib.define("w(Tensor x) -> Tensor")
        lib.impl("w", lambda x: x, "CompositeImplicit")
        lib._destroy()
    finally:
        sub.close()
    # Destroying the Library undefines the op and then drops its composite kernel.
    assert heard == [("defined", f"{ns}::w"), ("kernels", f"{ns}::w"),
                     ("undefined", f"{ns}::w"), ("kernels", f"{ns}::w")]


def test_a_torch_typed_kernel_gets_torch_values_from_opreg_calls(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("c(Tensor x, ScalarType dtype) -> Tensor")
    got = []

    def c(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        got.append((type(x), dtype))
        return torch.cos(x).to(dtype)

    lib.impl("c", c, "CPU")
    a = np.linspace(0, 1, 5, dtype=np.float32)
    out = getattr(opreg.ops, ns).c(a, "float64")
    np.testing.assert_allclose(np.asarray(out), np.cos(a), rtol=1e-6)
    assert got == [(torch.Tensor, torch.float64)]
    lib._destroy()


def _while_composites_churn(ns, name, call, expected, calls=3000):
    """Checks that call() gives `expected`, `calls` times, while another thread keeps adding and
    removing a composite kernel for op `name`; the thread's errors fail the test."""
    stop = threading.Event()
    errors = []

    def churn():
        try:
            while not stop.is_set():
                extra = opreg.Library(ns, "FRAGMENT")
                extra.impl(name, lambda x: x * 2, "CompositeImplicit")
                extra._destroy()
        except BaseException as e:  # reported below
            errors.append(e)

    worker = threading.Thread(target=churn)
    worker.start()
    try:
        for _ in range(calls):
            assert call() == expected
    finally:
        stop.set()
        worker.join()
    assert errors == []


def test_changing_the_composite_leaves_a_backend_kernel_in_use_alone(ns):
    # The op's own CPU kernel serves calls on the main thread while another thread registers and
    # removes a composite kernel: the CPU kernel is never deleted and registered again under a
    # running call (which crashed, torch then calling a freed kernel), and every call gives it.
    lib = opreg.Library(ns, "DEF")
    lib.define("r(Tensor x) -> Tensor")
    lib.impl("r", lambda x: np.asarray(x) * 10, "CPU")
    op = getattr(torch.ops, ns).r
    _while_composites_churn(ns, "r", lambda: op(torch.ones(2)).tolist(), [10.0, 10.0])
    lib._destroy()


def test_in_place_and_out_ops_decompose_into_their_composite(ns):
    lib = opreg.Library(ns, "DEF")
    lib.define("scale_(Tensor(a!) x, Tensor y) -> Tensor(a!)")
    lib.define("scale.out(Tensor x, Tensor y, *, Tensor(a!) out) -> Tensor(a!)")
    lib.impl("scale_", lambda x, y: x.mul_(y), "CompositeImplicit")
    lib.impl("scale.out", lambda x, y, out: torch.mul(x, y, out=out), "CompositeImplicit")
    ops = getattr(torch.ops, ns)
    for q in (f"{ns}::scale_", f"{ns}::scale.out"):
        assert _has_cia(q) and not _has_cpu(q)
    y = torch.full((3,), 2.0, requires_grad=True)
    x = torch.ones(3, requires_grad=True)
    h = x * 1  # not a leaf: written in place
    assert ops.scale_(h, y) is h
    (h.sum() + y.sum()).backward()
    torch.testing.assert_close(y.grad, torch.full((3,), 2.0))  # 1 from the op, 1 from y.sum()
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0))
    out = torch.empty(3)
    assert ops.scale.out(torch.ones(3), torch.full((3,), 3.0), out=out) is out
    assert out.tolist() == [3.0, 3.0, 3.0]
    compiled = torch.compile(lambda a, b: ops.scale_(a.clone(), b), backend="aot_eager",
                             fullgraph=True)
    torch.testing.assert_close(compiled(torch.ones(3), torch.full((3,), 4.0)),
                               torch.full((3,), 4.0))
    torch._dynamo.reset()
    lib._destroy()


def _defined_with_composite(ns, name, composite):
    """(the Library defining `name(Tensor x) -> Tensor`, another giving it `composite`)."""
    lib = opreg.Library(ns, "DEF")
    lib.define(f"{name}(Tensor x) -> Tensor")
    extra = opreg.Library(ns, "FRAGMENT")
    extra.impl(name, composite, "CompositeImplicit")
    return lib, extra


def test_the_newest_composite_serves_both_worlds(ns):
    lib, older = _defined_with_composite(ns, "n", lambda x: x * 3)

    def newest(x: "OpregTensor") -> "OpregTensor":  # a string annotation, as under
        return np.asarray(x) * 4                   # `from __future__ import annotations`

    newer = opreg.Library(ns, "FRAGMENT")
    newer.impl("n", newest, "CompositeImplicit")
    assert getattr(torch.ops, ns).n(torch.ones(2)).tolist() == [4.0, 4.0]
    assert np.asarray(getattr(opreg.ops, ns).n(np.ones(2, np.float32))).tolist() == [4.0, 4.0]
    assert not _has_cia(f"{ns}::n")
    newer._destroy()
    assert getattr(torch.ops, ns).n(torch.ones(2)).tolist() == [3.0, 3.0]
    assert _has_cia(f"{ns}::n")
    older._destroy()
    lib._destroy()


OpregTensor = opreg.Tensor


def test_a_composite_collected_on_another_thread_gives_way_at_once(ns):
    # The torch kernels follow at the main thread's next bytecode boundary; until then torch's
    # composite kernel runs what opreg runs (the older composite, written for opreg values), not
    # an error.
    lib = opreg.Library(ns, "DEF")
    lib.define("g(Tensor x) -> Tensor")
    lib.impl("g", _opreg_typed(10), "CompositeImplicit")
    op = getattr(torch.ops, ns).g
    got = []

    def worker():
        extra = opreg.Library(ns, "FRAGMENT")
        extra.impl("g", lambda x: x * 2, "CompositeImplicit")
        got.append(op(torch.ones(2)).tolist())
        del extra
        gc.collect()
        got.append(op(torch.ones(2)).tolist())

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert got == [[2.0, 2.0], [10.0, 10.0]]
    _op_events.deliver()
    assert not _has_cia(f"{ns}::g")
    lib._destroy()


def test_an_undefined_op_loses_its_composite_in_torch(ns):
    lib, extra = _defined_with_composite(ns, "d", lambda x: x * 13)
    op = getattr(torch.ops, ns).d
    assert op(torch.ones(1)).tolist() == [13.0]
    lib._destroy()  # the op is gone from opreg; `extra` and its kernel are still alive
    assert not _has_cia(f"{ns}::d")
    with pytest.raises(NotImplementedError):
        op(torch.ones(1))
    extra._destroy()


def test_a_torch_typed_kernel_may_come_before_its_op(ns):
    lib = opreg.Library(ns, "FRAGMENT")

    def k(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        return (x * 3).to(dtype)

    lib.impl("k", k, "CPU")
    lib.define("k(Tensor x, ScalarType dtype) -> Tensor")
    out = getattr(opreg.ops, ns).k(np.ones(2, np.float32), "float64")
    assert np.asarray(out).tolist() == [3.0, 3.0]
    lib._destroy()


def test_the_backend_goes_to_the_composite_when_its_own_kernel_goes(ns):
    lib, cpu_lib = _defined_with_composite(ns, "b", lambda x: x.sin() * 2)
    cpu_lib.impl("b", lambda x: np.asarray(x) * 10, "CPU")  # opreg's own CPU kernel beside it
    q = f"{ns}::b"
    assert _has_cpu(q) and getattr(torch.ops, ns).b(torch.ones(1)).tolist() == [10.0]
    cpu_lib._destroy()  # also the composite: the op has none left
    assert not _has_cia(q) and _has_cpu(q)
    cpu_lib = opreg.Library(ns, "FRAGMENT")
    cpu_lib.impl("b", lambda x: np.asarray(x) * 10, "CPU")
    extra = opreg.Library(ns, "FRAGMENT")
    extra.impl("b", lambda x: x.sin() * 2, "CompositeImplicit")
    cpu_lib._destroy()  # the composite stays: torch decomposes on CPU too now
    assert _has_cia(q) and not _has_cpu(q)
    x = torch.zeros(2, requires_grad=True)
    getattr(torch.ops, ns).b(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    extra._destroy()
    lib._destroy()


def test_meta_calls_survive_composite_changes_on_another_thread(ns):
    # The fake is registered once and runs the composite kernel while there is one, so a change
    # never pulls it from under a meta call (which crashed when it was swapped).
    lib = opreg.Library(ns, "DEF")
    lib.define("m(Tensor x) -> Tensor")
    lib.impl("m", lambda x: np.asarray(x) * 10, "CPU")
    lib.register_fake("m", lambda x: torch.empty_like(x))
    op = getattr(torch.ops, ns).m
    _while_composites_churn(ns, "m", lambda: op(torch.empty(2, device="meta")).shape, (2,))
    lib._destroy()


def test_a_functional_op_with_an_out_overload_decomposes_in_torch(ns):
    # opreg runs such a functional op through its out variant; torch has no out resolution, so
    # the composite kernel is the op's own there.
    lib = opreg.Library(ns, "DEF")
    lib.define("p(Tensor x) -> Tensor")
    lib.define("p.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    lib.impl("p", lambda x: x * x * 3, "CompositeImplicit")
    assert _has_cia(f"{ns}::p") and not _has_cpu(f"{ns}::p")
    x = torch.ones(2, requires_grad=True)
    y = getattr(torch.ops, ns).p(x)
    y.sum().backward()
    assert y.tolist() == [3.0, 3.0] and x.grad.tolist() == [6.0, 6.0]
    lib._destroy()


def test_a_graph_traced_before_an_in_place_op_got_its_composite_follows_it(ns):
    # The graph holds the op's companion (functionalization), which follows its owner.
    lib = opreg.Library(ns, "DEF")
    lib.define("f_(Tensor(a!) x, Tensor y) -> Tensor(a!)")
    cpu = opreg.Library(ns, "FRAGMENT")

    def times_ten(x, y):
        a = np.asarray(x)
        a *= 10 * np.asarray(y)
        return x

    cpu.impl("f_", times_ten, "CPU")
    op = getattr(torch.ops, ns).f_.default

    def fn(x, y):
        a = x.clone()
        op(a, y)
        return a + 0

    compiled = torch.compile(fn, backend="aot_eager", fullgraph=True)
    args = (torch.full((3,), 2.0), torch.full((3,), 3.0))
    assert compiled(*args).tolist() == [60.0] * 3
    extra = opreg.Library(ns, "FRAGMENT")
    extra.impl("f_", lambda x, y: x.mul_(y).add_(1), "CompositeImplicit")
    cpu._destroy()  # the composite serves every backend now
    assert fn(*args).tolist() == [7.0] * 3
    assert compiled(*args).tolist() == [7.0] * 3
    torch._dynamo.reset()
    extra._destroy()
    lib._destroy()
