import gc
import sys
import tracemalloc

import numpy as np
import pytest

import opreg


def test_metadata_and_repr():
    t = opreg.zeros((2, 3), dtype="float32")
    assert t.shape == (2, 3)
    assert t.dtype == "float32"
    assert t.device == "cpu"
    assert t.ndim == 2 and t.numel() == 6
    assert "dtype=float32" in repr(t) and "device=cpu" in repr(t)
    m = opreg.empty((4,), dtype="bfloat16", device="meta")
    assert m.device == "meta" and m.dtype == "bfloat16"
    assert repr(m) == "opreg.Tensor(shape=(4,), dtype=bfloat16, device=meta)"


def test_factories():
    np.testing.assert_array_equal(opreg.ones(3).numpy(), np.ones(3, np.float32))
    np.testing.assert_array_equal(opreg.full((2,), 7.0, dtype="int32").numpy(), [7, 7])
    np.testing.assert_array_equal(opreg.arange(4).numpy(), [0, 1, 2, 3])
    t = opreg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t.dtype == "float32" and t.shape == (2, 2)
    assert opreg.tensor([1, 2], dtype="int64").dtype == "int64"
    with pytest.raises(ValueError):
        opreg.zeros((2,), dtype="complex128")


def test_from_numpy_is_zero_copy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = opreg.from_dlpack(a)
    assert t.shape == (3, 4) and t.dtype == "float32"
    assert t.data_ptr() == a.ctypes.data
    a[0, 0] = 42
    assert t.numpy()[0, 0] == 42


def test_numpy_view_is_zero_copy_and_writable():
    t = opreg.zeros((2, 2))
    v = t.numpy()
    v[1, 1] = 5
    assert t.numpy()[1, 1] == 5
    assert v.ctypes.data == t.data_ptr()
    assert np.asarray(t).ctypes.data == t.data_ptr()


def test_strided_views_roundtrip():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2]
    t = opreg.from_dlpack(a)
    assert t.strides == (6, 2)
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "uint8", "int16",
                                   "int32", "int64", "bool", "uint16", "uint32", "uint64"])
def test_dtypes_roundtrip(dtype):
    a = (np.arange(6) % 2).astype(dtype)
    t = opreg.from_dlpack(a)
    assert t.dtype == dtype
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(opreg.tensor(a).numpy(), a)  # the buffer-protocol path


def test_numpy_refcount_balanced():
    a = np.ones(10, np.float32)
    base = sys.getrefcount(a)
    t = opreg.from_dlpack(a)
    assert sys.getrefcount(a) == base + 1  # the DLPack manager holds the array
    del t
    gc.collect()
    assert sys.getrefcount(a) == base  # deleter ran exactly once


def test_export_deleter_runs_exactly_once():
    t = opreg.ones(8)
    live0 = opreg._C._dlpack_live_exports()
    calls0 = opreg._C._dlpack_deleter_calls()
    a = np.from_dlpack(t)
    assert opreg._C._dlpack_live_exports() == live0 + 1
    del a
    gc.collect()
    assert opreg._C._dlpack_live_exports() == live0
    assert opreg._C._dlpack_deleter_calls() == calls0 + 1


def test_unconsumed_capsule_is_freed_by_its_destructor():
    t = opreg.ones(4)
    live0 = opreg._C._dlpack_live_exports()
    cap = t.__dlpack__()
    assert opreg._C._dlpack_live_exports() == live0 + 1
    del cap
    assert opreg._C._dlpack_live_exports() == live0


def test_capsule_is_renamed_on_consumption_and_single_use():
    import ctypes

    t = opreg.ones(4)
    cap = t.__dlpack__()
    u = opreg.from_dlpack(cap)
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    assert get_name(cap) == b"used_dltensor"
    with pytest.raises(ValueError, match="already consumed"):
        opreg.from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    live = opreg._C._dlpack_live_exports()
    del cap  # consumed: the capsule must not free it
    assert opreg._C._dlpack_live_exports() == live
    del u
    assert opreg._C._dlpack_live_exports() == live - 1


def test_dlpack_device():
    assert opreg.ones(1).__dlpack_device__() == (1, 0)
    with pytest.raises(ValueError):
        opreg.empty((1,), device="meta").__dlpack__()


def test_no_leak_over_10000_roundtrips():
    a = np.ones(256, np.float32)
    base_refs = sys.getrefcount(a)
    live0 = opreg._C._dlpack_live_exports()

    def roundtrip(n):
        for _ in range(n):
            t = opreg.from_dlpack(a)
            b = np.from_dlpack(t)  # export (NumPy's result is read-only)
            c = opreg.from_dlpack(t.numpy())  # a writable view goes back through DLPack
            del t, b, c

    roundtrip(200)
    gc.collect()
    tracemalloc.start()
    snap0 = tracemalloc.take_snapshot()
    roundtrip(10000)
    gc.collect()
    snap1 = tracemalloc.take_snapshot()
    tracemalloc.stop()
    growth = sum(s.size_diff for s in snap1.compare_to(snap0, "filename"))
    assert growth < 64 * 1024, growth
    assert sys.getrefcount(a) == base_refs
    assert opreg._C._dlpack_live_exports() == live0


def test_rss_bounded_over_roundtrips():
    import resource

    a = np.ones(1 << 16, np.float32)  # 256 KiB: a leak would show in RSS
    for _ in range(500):
        np.from_dlpack(opreg.from_dlpack(a))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(10000):
        np.from_dlpack(opreg.from_dlpack(a))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 20 * 1024  # KiB


def test_torch_roundtrip():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = opreg.from_dlpack(x)
    assert t.shape == (2, 3) and t.data_ptr() == x.data_ptr()
    y = torch.from_dlpack(t)
    assert y.data_ptr() == x.data_ptr()
    y[0, 0] = 7
    assert x[0, 0] == 7
    base = sys.getrefcount(x)
    u = opreg.from_dlpack(x)
    del u
    gc.collect()
    assert sys.getrefcount(x) == base


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_torch_unsigned_dtypes_cross_both_ways(name):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    dtype = getattr(torch, name)
    big = {"uint16": 65535, "uint32": 4_000_000_000, "uint64": 2**63 + 5}[name]
    t = torch.tensor([0, 1, big], dtype=dtype)
    o = opreg.from_dlpack(t)
    assert o.dtype == name
    assert o.numpy().tolist() == [0, 1, big]
    back = torch.from_dlpack(o)
    assert back.dtype == dtype and back.data_ptr() == t.data_ptr()  # no copy either way
    assert back.tolist() == [0, 1, big]
