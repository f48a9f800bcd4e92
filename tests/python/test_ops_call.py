import numpy as np
import pytest

import opreg


def test_builtin_ops_are_reachable():
    names = opreg.list_ops()
    assert names == sorted(names)
    if "opreg::add" not in names:
        pytest.skip("opreg::ops not linked in this build")
    x = np.arange(4, dtype=np.float32)
    y = opreg.ops.opreg.add(x, x)
    assert isinstance(y, np.ndarray)  # NumPy in, NumPy out
    with opreg.returning_opreg_tensors():
        assert isinstance(opreg.ops.opreg.add(x, x), opreg.Tensor)
    np.testing.assert_array_equal(np.asarray(y), x * 2)
    s, d = opreg.ops.opreg.split_add(x, x)
    np.testing.assert_array_equal(np.asarray(s), x * 2)
    np.testing.assert_array_equal(np.asarray(d), x * 0)


def test_packet_and_overloads(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x, float alpha=2., *, int repeat=1) -> Tensor")
    lib.define("f.two(Tensor x, Tensor y) -> (Tensor, Tensor)")
    lib.impl("f", lambda x, alpha, repeat: x.numpy() * alpha * repeat, "CPU")
    lib.impl("f.two", lambda x, y: (x.numpy() + y.numpy(), x.numpy() - y.numpy()), "CPU")
    packet = getattr(opreg.ops, ns).f
    assert isinstance(packet, opreg.OpPacket)
    assert sorted(packet.overloads()) == ["default", "two"]
    assert packet.default.schema == f"{ns}::f(Tensor x, float alpha=2., *, int repeat=1) -> Tensor"
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(np.asarray(packet(x)), [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(packet(x, 3)), [3, 3, 3])
    np.testing.assert_array_equal(np.asarray(packet(x, alpha=0.5, repeat=4)), [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(packet.default(x=x, alpha=1)), [1, 1, 1])
    a, b = packet.two(x, x)
    np.testing.assert_array_equal(np.asarray(a), [2, 2, 2])
    np.testing.assert_array_equal(np.asarray(b), [0, 0, 0])
    # Packets are cached on the namespace.
    assert getattr(opreg.ops, ns).f is packet


def test_argument_kinds(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("g(Tensor[] xs, int[] dims, str mode, Tensor? maybe, float[] fs, bool flag, "
               "Scalar s, ScalarType dt, Device dev) -> str")
    seen = {}

    def g(xs, dims, mode, maybe, fs, flag, s, dt, dev):
        seen.update(locals())
        return f"{mode}:{len(xs)}"

    lib.impl("g", g, "CPU")
    x = np.zeros(2, np.float32)
    r = getattr(opreg.ops, ns).g([x, opreg.ones(2)], (1, 2), "m", None, [1, 2.5], True, 3,
                                 "float16", "cpu")
    assert r == "m:2"
    assert seen["dims"] == [1, 2] and seen["maybe"] is None and seen["fs"] == [1.0, 2.5]
    assert seen["flag"] is True and seen["s"] == 3 and seen["dev"] == "cpu"
    assert seen["dt"] == 5  # c10::ScalarType::Half
    assert all(isinstance(t, opreg.Tensor) for t in seen["xs"])


def test_none_return_and_numpy_int(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("h(Tensor x, int n) -> ()")
    calls = []
    lib.impl("h", lambda x, n: calls.append(n), "CPU")
    assert getattr(opreg.ops, ns).h(np.zeros(1), np.int64(5)) is None
    assert calls == [5]


def test_cpp_noop_ops():
    x = opreg.zeros((2,))
    assert opreg.ops._opreg_test.noop1(x) is None
    assert opreg.ops._opreg_test.noop3(x, x, x) is None
    y = opreg.ops._opreg_test.scale(np.ones(2, np.float32), repeat=2)
    np.testing.assert_array_equal(np.asarray(y), [4, 4])


def test_unknown_op_and_overload():
    with pytest.raises(AttributeError):
        opreg.ops._opreg_test.does_not_exist
    with pytest.raises(AttributeError):
        opreg.ops._opreg_test.noop1.nope


def test_python_op_called_from_cpp(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("plus1(Tensor x) -> Tensor")
    lib.impl("plus1", lambda x: x.numpy() + 1, "CPU")
    x = np.zeros(3, np.float32)
    # A C++ composite op that calls ns::plus1 through a typed handle, then boxed.
    y = opreg.ops._opreg_test.apply_twice(f"{ns}::plus1", x)
    np.testing.assert_array_equal(np.asarray(y), [2, 2, 2])
    # OperatorHandle::CallBoxed from C++.
    z = opreg._C._call_boxed_from_cpp(f"{ns}::plus1", opreg.from_dlpack(x))
    np.testing.assert_array_equal(np.asarray(z), [1, 1, 1])


def test_torch_tensors_as_arguments(ns):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("dbl(Tensor x) -> Tensor")
    lib.impl("dbl", lambda x: x.numpy() * 2, "CPU")
    y = getattr(opreg.ops, ns).dbl(torch.ones(3))
    assert torch.equal(torch.from_dlpack(y), torch.full((3,), 2.0))
