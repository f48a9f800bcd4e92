"""Torch and NumPy tensors through opreg calls: zero-copy both ways, results in the caller's
framework, strides, dtypes (bf16, fp8), read-only arrays, versioned DLPack, reference counts."""
import gc
import sys
import threading

import numpy as np
import pytest

import opreg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")

# torch 2.11 and later publish the C exchange API; older torch goes through __dlpack__.
HAS_EXCHANGE_API = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")

needs_ops = pytest.mark.skipif("opreg::add" not in opreg.list_ops(),
                               reason="opreg::ops not linked in this build")


@needs_ops
def test_torch_in_torch_out_zero_copy(device):
    x = torch.arange(6, dtype=torch.float32, device=device).reshape(2, 3)
    y = opreg.ops.opreg.add(x, x)
    assert isinstance(y, torch.Tensor)
    assert y.device == x.device
    assert torch.equal(y, x * 2)
    # The result is opreg's memory, shared: a write through torch is seen by opreg and back.
    t = opreg.from_dlpack(y)
    assert t.data_ptr() == y.data_ptr()
    y[0, 0] = 42.0
    assert torch.from_dlpack(t)[0, 0].item() == 42.0
    torch.from_dlpack(t)[1, 2] = -1.0
    assert y[1, 2].item() == -1.0
    with opreg.returning_opreg_tensors():
        z = opreg.ops.opreg.add(x, x)
    assert isinstance(z, opreg.Tensor)
    assert isinstance(opreg.ops.opreg.add(x, x), torch.Tensor)  # the setting ended with the block


@needs_ops
def test_in_place_op_writes_the_callers_torch_tensor(device):
    x = torch.randn(4, 8, device=device)
    residual = torch.randn(4, 8, device=device)
    w = torch.rand(8, device=device) + 0.5
    expect_res = x + residual
    expect = expect_res * torch.rsqrt(expect_res.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    x_ptr = x.data_ptr()
    assert opreg.ops.opreg.fused_add_rms_norm_(x, residual, w, 1e-6) is None
    assert x.data_ptr() == x_ptr
    torch.testing.assert_close(residual, expect_res)
    torch.testing.assert_close(x, expect, rtol=1e-5, atol=1e-5)


@needs_ops
def test_out_returns_are_the_callers_numpy_and_opreg_objects():
    # As for torch tensors (test_torch_bridge.py): an out variant returns the very `out`.
    a = np.arange(4, dtype=np.float32)
    o = np.empty(4, np.float32)
    assert opreg.ops.opreg.add.out(a, a, out=o) is o
    np.testing.assert_array_equal(o, 2 * a)
    t = opreg.empty((4,), "float32")
    assert opreg.ops.opreg.add.out(a, a, out=t) is t
    np.testing.assert_array_equal(np.asarray(t), 2 * a)


def test_strides_and_offsets_are_kept(device):
    base = torch.arange(24, dtype=torch.float32, device=device).reshape(4, 6)
    view = base.t()[1:, ::2]  # non-contiguous, storage offset
    t = opreg.from_dlpack(view)
    assert t.shape == tuple(view.shape)
    assert t.strides == tuple(view.stride())
    assert t.data_ptr() == view.data_ptr()
    back = torch.from_dlpack(t)
    assert back.stride() == view.stride() and back.data_ptr() == view.data_ptr()
    assert torch.equal(back, view)
    if "opreg::add" in opreg.list_ops():  # add reads inputs of any strides, on CPU and CUDA
        torch.testing.assert_close(opreg.ops.opreg.add(view, view), view * 2)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int8", "uint8",
                                   "int16", "int32", "int64", "bool", "float8_e4m3fn",
                                   "float8_e5m2"])
def test_every_dtype_round_trips_through_torch(dtype, device):
    tdt = getattr(torch, dtype)
    x = torch.ones(5, dtype=tdt) if dtype.startswith("float8") else torch.arange(5).to(tdt)
    x = x.to(device)
    if dtype.startswith("float8") and not HAS_EXCHANGE_API:
        try:
            x.__dlpack__()
        except BufferError as e:
            pytest.skip(f"torch {torch.__version__} exports no {dtype} through DLPack: {e}")
    t = opreg.from_dlpack(x)
    assert t.dtype == dtype
    assert t.data_ptr() == x.data_ptr()
    back = torch.from_dlpack(t)
    assert back.dtype == tdt and back.data_ptr() == x.data_ptr() and back.device == x.device
    assert torch.equal(back.view(torch.uint8), x.view(torch.uint8))


@needs_ops
def test_bf16_op_returns_bf16_torch(device):
    x = torch.randn(3, 16, dtype=torch.bfloat16, device=device)
    y = opreg.ops.opreg.add(x, x)
    assert y.dtype == torch.bfloat16
    torch.testing.assert_close(y, x + x)


@needs_ops
def test_numpy_in_numpy_out_and_mixed_calls():
    a = np.arange(4, dtype=np.float32)
    y = opreg.ops.opreg.add(a, a)
    assert isinstance(y, np.ndarray) and y.flags.writeable
    np.testing.assert_array_equal(y, a * 2)
    # torch wins over NumPy when a call mixes them.
    assert isinstance(opreg.ops.opreg.add(torch.from_numpy(a), a), torch.Tensor)
    # opreg.Tensor arguments keep opreg.Tensor results.
    assert isinstance(opreg.ops.opreg.add(opreg.from_dlpack(a), opreg.from_dlpack(a)),
                      opreg.Tensor)


@needs_ops
def test_read_only_arrays_are_read_but_never_written():
    ro = np.ones((2, 3), np.float32)
    ro.flags.writeable = False
    np.testing.assert_array_equal(opreg.ops.opreg.add(ro, ro), 2 * ro)
    with pytest.raises(ValueError, match=r"\[opreg::fused_add_rms_norm_\] argument 'input' \(#0\): "
                                         r"expected a writable tensor .* got a read-only"):
        opreg.ops.opreg.fused_add_rms_norm_(ro, np.ones((2, 3), np.float32),
                                            np.ones(3, np.float32), 1e-6)
    # Passed twice, a read-only array is checked at each place it is passed: read as `weight`,
    # refused as `residual`.
    with pytest.raises(ValueError, match=r"argument 'residual' \(#1\): expected a writable tensor"):
        opreg.ops.opreg.fused_add_rms_norm_(np.ones((2, 3), np.float32), weight=ro, residual=ro,
                                            eps=1e-6)
    assert (ro == 1).all()


def test_versioned_dlpack_both_ways():
    t = opreg.arange(4, dtype="float32")
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    assert "dltensor_versioned" not in repr(t.__dlpack__())  # no max_version: legacy capsule
    a = np.from_dlpack(t)  # NumPy asks for a versioned capsule: writable
    assert a.flags.writeable
    a[1] = 10.0
    assert np.asarray(t)[1] == 10.0
    # A read-only NumPy array exports a versioned capsule flagged read-only; opreg reads it.
    ro = np.arange(3, dtype=np.float32)
    ro.flags.writeable = False
    np.testing.assert_array_equal(np.asarray(opreg.from_dlpack(ro.__dlpack__(max_version=(1, 0)))),
                                  ro)


@needs_ops
def test_no_reference_leak_over_100k_calls(device):
    x = torch.ones(8, device=device)
    a = np.ones(8, np.float32)
    # NumPy arrays are CPU memory: on CUDA both calls take torch tensors.
    b = a if device == "cpu" else torch.ones(8, device=device)
    f = opreg.ops.opreg.add
    for _ in range(100):  # warm-up: caches of types and ops fill once
        f(x, x), f(b, b)
    gc.collect()
    rx, ra = sys.getrefcount(x), sys.getrefcount(b)
    live = opreg._C._dlpack_live_exports()
    for _ in range(100_000):
        f(x, x)
        f(b, b)
    gc.collect()
    assert sys.getrefcount(x) == rx
    assert sys.getrefcount(b) == ra
    assert opreg._C._dlpack_live_exports() == live


@needs_ops
def test_argument_objects_are_reused_but_never_while_kept():
    x = torch.arange(4, dtype=torch.float32)
    a = np.arange(4, dtype=np.float32)
    opreg.ops.opreg.add(x, x.clone())
    cached = opreg._C._recycled_tensors_cached()
    assert cached >= 2  # both arguments' tensor objects wait for the next call
    opreg.ops.opreg.add(a, a.copy())
    assert opreg._C._recycled_tensors_cached() == cached
    # An out= result is the caller's `out` object itself (as in torch), so its opreg tensor is
    # given back like the others; the result stays valid while later calls reuse them.
    opreg.ops.opreg.linear(torch.ones(2, 4), torch.ones(3, 4), torch.ones(3))  # 3 cached
    before = opreg._C._recycled_tensors_cached()
    out = torch.zeros(4)
    r = opreg.ops.opreg.add.out(x, x, out=out)
    assert r is out
    assert opreg._C._recycled_tensors_cached() == before  # 3 taken, 3 given back
    del out
    gc.collect()
    for _ in range(10):
        opreg.ops.opreg.add(torch.ones(8), torch.ones(8))
        opreg.ops.opreg.mul(a, a)
    torch.testing.assert_close(r, x * 2)
    # A recycled tensor keeps nothing alive: the argument's memory goes with its last reference.
    y = torch.ones(3)
    ry = sys.getrefcount(y)
    opreg.ops.opreg.add(y, y)
    assert sys.getrefcount(y) == ry


@needs_ops
def test_ops_called_from_a_python_kernel_inside_an_op_call():
    # The inner calls run while the outer call's argument stack and tensor objects are in use:
    # they must get their own, and every argument must still be released.
    lib = opreg.Library("fw_nested", "FRAGMENT")
    lib.define("twice_sum(Tensor a, Tensor b) -> Tensor")

    def twice_sum(a, b):
        s = opreg.ops.opreg.add(a, b)
        return opreg.ops.opreg.add(s, s)

    lib.impl("twice_sum", twice_sum, "CPU")
    x, y = torch.arange(4, dtype=torch.float32), torch.ones(4)
    a = np.arange(4, dtype=np.float32)
    rx, ry, ra = sys.getrefcount(x), sys.getrefcount(y), sys.getrefcount(a)
    for _ in range(3):
        r = opreg.ops.fw_nested.twice_sum(x, y)
        assert isinstance(r, torch.Tensor)
        torch.testing.assert_close(r, (x + y) * 2)
        np.testing.assert_array_equal(opreg.ops.fw_nested.twice_sum(a, a), a * 4)
    del r
    gc.collect()
    assert (sys.getrefcount(x), sys.getrefcount(y), sys.getrefcount(a)) == (rx, ry, ra)


def test_one_object_passed_twice_is_one_tensor_in_the_call():
    # Checked on a new thread, whose cache of tensor objects starts empty: each distinct
    # framework object costs one import (one cached object afterwards), whatever its repeats.
    x, y = torch.arange(4, dtype=torch.float32), torch.ones(4)
    a = np.arange(4, dtype=np.float32)
    counts = []

    def calls():
        counts.append(opreg._C._recycled_tensors_cached())
        torch.testing.assert_close(opreg.ops.opreg.add(x, x), x * 2)
        counts.append(opreg._C._recycled_tensors_cached())
        np.testing.assert_array_equal(opreg.ops.opreg.mul(a, a), a * a)
        counts.append(opreg._C._recycled_tensors_cached())
        torch.testing.assert_close(opreg.ops.opreg.add(x, y), x + 1)
        counts.append(opreg._C._recycled_tensors_cached())

    thread = threading.Thread(target=calls)
    thread.start()
    thread.join()
    assert counts == [0, 1, 1, 2]
    # One tensor, so an out= argument that is also an input is seen to overlap it.
    with pytest.raises(ValueError, match=r"argument 'out' \(#3\): .* shares its memory"):
        opreg.ops.opreg.add.out(x, y, out=x)


def test_result_keeps_its_memory_alive_after_the_input_dies():
    x = torch.arange(1000, dtype=torch.float32)
    t = opreg.from_dlpack(x)
    ptr = x.data_ptr()
    del x
    gc.collect()
    assert t.data_ptr() == ptr
    np.testing.assert_array_equal(np.asarray(t)[:3], [0, 1, 2])


@needs_ops
def test_wrong_dtype_names_op_and_argument(device):
    with pytest.raises(TypeError, match=r"\[opreg::rms_norm\] argument 'input' \(#0\): "
                                        r"expected dtype f32, f16 or bf16, got i64"):
        opreg.ops.opreg.rms_norm(torch.ones(2, 4, dtype=torch.int64, device=device),
                                 torch.ones(4, device=device), 1e-6)
    with pytest.raises(TypeError, match=r"\[opreg::add\] argument 'other' \(#1\)"):
        opreg.ops.opreg.add(torch.ones(2, device=device), "not a tensor")


@needs_ops
def test_a_tensor_its_producer_will_not_export_names_op_and_argument():
    # torch refuses to export a meta tensor, NumPy a byte-swapped array: the error says which op
    # and argument, and keeps only the producer's first line (torch's has a C++ backtrace).
    meta = torch.empty(4, 16, device="meta")
    with pytest.raises(ValueError, match=r"\[opreg::rms_norm\] argument 'input' \(#0\): expected "
                                         r".*torch\.Tensor refused: .*meta") as info:
        opreg.ops.opreg.rms_norm(meta, torch.empty(16, device="meta"), 1e-6)
    assert "\n" not in str(info.value)
    swapped = np.zeros(3, dtype=">f4")
    with pytest.raises(ValueError, match=r"\[opreg::add\] argument 'self' \(#0\): expected "
                                         r".*numpy\.ndarray refused: .*byte order"):
        opreg.ops.opreg.add(swapped, np.zeros(3, np.float32))


def test_fast_import_is_used_for_torch_and_numpy():
    assert opreg._C._has_fast_import(torch.ones(1)) == HAS_EXCHANGE_API
    assert opreg._C._has_fast_import(torch.nn.Parameter(torch.ones(1))) == HAS_EXCHANGE_API
    assert opreg._C._has_fast_import(np.ones(1))
    assert not opreg._C._has_fast_import([1.0])


def test_torch_negated_views_are_refused_not_read_unnegated():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    z = torch.tensor([[1 + 2j, 3 - 4j], [5 + 6j, 7 - 8j]])
    for view in (z.conj().imag, z.conj().imag.t(), z.conj().imag[1:], z[0, :1].conj().imag):
        assert view.is_neg()
        with pytest.raises(ValueError, match=r"\[opreg::add\] argument 'self' \(#0\): the tensor "
                                             r"is a lazily negated view .* pass t.resolve_neg\(\)"):
            opreg.ops.opreg.add(view, torch.zeros_like(view))
        resolved = view.resolve_neg()
        torch.testing.assert_close(opreg.ops.opreg.add(resolved, torch.zeros_like(view)),
                                   resolved)  # the negated values, as torch reads them
    with pytest.raises(ValueError, match="lazily negated view"):
        opreg.from_dlpack(z.conj().imag)
    # A plain tensor at an odd element offset is asked, and passes.
    x = torch.arange(6.0)
    torch.testing.assert_close(opreg.ops.opreg.add(x[1:], x[1:]), 2 * x[1:])
