import gc

import numpy as np
import pytest

import opreg


@pytest.fixture
def chain_ops(ns):
    """A functional op with an out variant (written in Python), and its meta function."""
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("add(Tensor x, Tensor y) -> Tensor")
    lib.define("add.out(Tensor x, Tensor y, *, Tensor(a!) out) -> Tensor(a!)")
    lib.define("relu(Tensor x) -> Tensor")
    lib.define("relu.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")

    def add_out(x, y, out):
        np.add(x.numpy(), y.numpy(), out=out.numpy())
        return out

    def relu_out(x, out):
        np.maximum(x.numpy(), 0, out=out.numpy())
        return out

    lib.impl("add.out", add_out, "CPU")
    lib.impl("relu.out", relu_out, "CPU")
    lib.register_fake("add", lambda x, y: opreg.empty_like(x))
    lib.register_fake("relu", lambda x: opreg.empty_like(x))
    yield getattr(opreg.ops, ns)
    lib._destroy()


def capture_chain(o, x):
    with opreg.graph() as g:
        a = o.add(x, x)
        b = o.relu(a)
        c = o.add(b, x)
        del a, b
    return g, c


def test_capture_records_proxies_and_inputs(chain_ops):
    x = np.array([-1, 2, -3, 4], np.float32)
    g, c = capture_chain(chain_ops, x)
    assert c.device == "meta" and c.shape == (4,) and c.is_proxy
    assert g.num_inputs == 1 and g.num_outputs == 1 and g.num_nodes == 3
    assert "return %3" in str(g)


def test_replay_and_plan_stats(chain_ops):
    x = np.array([-1, 2, -3, 4], np.float32)
    g, _ = capture_chain(chain_ops, x)
    np.testing.assert_array_equal(np.asarray(g.replay()), [-1, 6, -3, 12])
    np.testing.assert_array_equal(np.asarray(g.replay(np.ones(4, np.float32))), [3, 3, 3, 3])
    stats = g.plan_stats()
    for k in ("arena_bytes", "lb_bytes", "naive_bytes", "eager_peak_bytes"):
        assert isinstance(stats[k], int)
    assert stats["arena_bytes"] == stats["lb_bytes"] == 128
    assert stats["naive_bytes"] > 0 and stats["arena_bytes"] <= stats["eager_peak_bytes"]
    # Another shape is planned again.
    np.testing.assert_array_equal(np.asarray(g.replay(np.ones(8, np.float32))), [3] * 8)


def test_inputs_in_first_use_order_and_explicit_outputs(chain_ops):
    x = np.ones(4, np.float32)
    y = np.full(4, 2, np.float32)
    with opreg.graph() as g:
        s = chain_ops.add(y, x)
        t = chain_ops.relu(s)
        g.output(s, t)
    assert g.num_inputs == 2
    assert [i.data_ptr() for i in g.inputs] == [y.ctypes.data, x.ctypes.data]
    s2, t2 = g.replay(np.full(4, 5, np.float32), np.full(4, -9, np.float32))
    np.testing.assert_array_equal(np.asarray(s2), [-4] * 4)
    np.testing.assert_array_equal(np.asarray(t2), [0] * 4)


def test_outputs_are_live_proxies_in_creation_order(chain_ops):
    x = np.ones(2, np.float32)
    with opreg.graph() as g:
        a = chain_ops.add(x, x)
        b = chain_ops.relu(a)
        c = chain_ops.add(a, b)
        del b
    out = g.replay()
    assert isinstance(out, tuple) and len(out) == 2  # a and c
    np.testing.assert_array_equal(np.asarray(out[0]), [2, 2])
    np.testing.assert_array_equal(np.asarray(out[1]), [4, 4])


def test_builtin_ops_capture(chain_ops):
    if "opreg::rms_norm" not in opreg.list_ops():
        pytest.skip("opreg::ops not linked")
    x = np.random.rand(4, 8).astype(np.float32)
    w = np.ones(8, np.float32)
    with opreg.graph() as g:
        h = opreg.ops.opreg.rms_norm(x, w, 1e-6)
        y = opreg.ops.opreg.add(h, h)
        del h
    ref = opreg.ops.opreg.add(*(2 * [opreg.ops.opreg.rms_norm(x, w, 1e-6)]))
    np.testing.assert_allclose(np.asarray(g.replay()), ref, rtol=1e-6)
    assert g.plan_stats()["arena_bytes"] == g.plan_stats()["lb_bytes"]


def test_capture_errors(chain_ops):
    with opreg.graph() as g:
        with pytest.raises(RuntimeError, match="do not nest"):
            with opreg.graph():
                pass
    with pytest.raises(RuntimeError, match="not ready"):
        with opreg.graph() as g2:
            g2.replay()
    with pytest.raises(ZeroDivisionError):
        with opreg.graph() as g3:
            chain_ops.relu(np.ones(1, np.float32))
            1 / 0
    assert not opreg._C._capture_active()


def test_calls_outside_capture_are_eager_again(chain_ops):
    x = np.ones(2, np.float32)
    capture_chain(chain_ops, x)
    y = chain_ops.add(x, x)
    assert y.device == "cpu"
    np.testing.assert_array_equal(np.asarray(y), [2, 2])


def test_capture_is_per_thread(chain_ops):
    """Another thread's calls during a capture run for real and are not recorded."""
    import threading

    x = np.array([1, -2], np.float32)
    seen = {}

    def other():
        seen["active"] = opreg._C._capture_active()
        seen["y"] = chain_ops.add(x, x)

    with opreg.graph() as g:
        a = chain_ops.add(x, x)
        t = threading.Thread(target=other)
        t.start()
        t.join()
        b = chain_ops.relu(a)
        del a
    assert seen["active"] is False
    assert seen["y"].device == "cpu"
    np.testing.assert_array_equal(np.asarray(seen["y"]), [2, -4])
    assert g.num_nodes == 2
    np.testing.assert_array_equal(np.asarray(g.replay()), [2, 0])
    assert b.is_proxy


def test_python_kernel_calling_ops_inside_a_capture(ns):
    """A Python meta function that calls other ops runs them for real, with no opt-out."""
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("twice(Tensor x) -> Tensor")
    lib.define("twice.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")

    def twice_out(x, out):
        np.multiply(x.numpy(), 2, out=out.numpy())
        return out

    lib.impl("twice.out", twice_out, "CPU")
    lib.define("shape_of(Tensor x) -> Tensor")
    lib.register_fake("shape_of", lambda x: opreg.empty_like(x))
    ops = getattr(opreg.ops, ns)
    # The fake of `twice` calls another op: a real call (of its fake), not a recorded one.
    lib.register_fake("twice", lambda x: ops.shape_of(x))
    x = np.array([1, 2, 3], np.float32)
    with opreg.graph() as g:
        y = ops.twice(ops.twice(x))
    np.testing.assert_array_equal(np.asarray(g.replay()), [4, 8, 12])
    assert g.num_nodes == 2 and y.is_proxy
    assert "shape_of" not in str(g)
    lib._destroy()


def test_plan_budget_searches_once_per_shape(chain_ops):
    x = np.array([-1, 2, -3, 4], np.float32)
    with opreg.graph(plan_budget_ms=500) as g:
        c = chain_ops.add(chain_ops.relu(chain_ops.add(x, x)), x)
    stats = g.plan_stats()
    assert stats["search"] == "optimal" and stats["optimal_by"] == "lower bound"
    assert stats["arena_bytes"] == stats["lb_bytes"]
    np.testing.assert_array_equal(np.asarray(g.replay()), [-1, 6, -3, 12])
    assert g.plan_stats()["plan_ms"] == stats["plan_ms"]  # cached, not planned again
    with pytest.raises(ValueError, match="plan_budget_ms must be >= 0"):
        opreg.graph(plan_budget_ms=-1)
    del c
