"""Strided written arguments: a q/k column view of a fused qkv buffer (strides [3*H, 1]), as vLLM
passes them, written by the built-in norm and activation ops on the CPU through opreg.ops and
through torch.ops, with the rest of the buffer untouched. (CUDA kernels still need contiguous
written tensors, and say so.)"""
import numpy as np
import pytest

import opreg

o = opreg.ops.opreg
H = 64


def _rms(x, w, eps):
    x = x.astype(np.float64)
    return (x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w).astype(np.float32)


def _silu_and_mul(x):
    a, b = x[..., : x.shape[-1] // 2].astype(np.float64), x[..., x.shape[-1] // 2:]
    return (a / (1 + np.exp(-a)) * b).astype(np.float32)


def test_numpy_column_views_are_written_in_place():
    rng = np.random.default_rng(0)
    qkv = rng.standard_normal((4, 3 * H)).astype(np.float32)
    before = qkv.copy()
    x, w = rng.standard_normal((4, H)).astype(np.float32), np.ones(H, np.float32)
    q = qkv[:, :H]
    assert q.strides == (3 * H * 4, 4)
    o.rms_norm.out(x, w, 1e-6, out=q)
    np.testing.assert_allclose(q, _rms(x, w, 1e-6), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(qkv[:, H:], before[:, H:])
    k = qkv[:, H:2 * H]
    o.silu_and_mul.out(rng.standard_normal((4, 2 * H)).astype(np.float32), out=k)
    np.testing.assert_array_equal(qkv[:, 2 * H:], before[:, 2 * H:])


torch = pytest.importorskip("torch", reason="torch is not installed: the torch.ops cases need it")


@pytest.mark.parametrize("mode", ["grad", "inference_mode"])
def test_torch_column_views_through_torch_ops(mode):
    import opreg.torch  # noqa: F401 - opreg's ops in torch.ops

    ctx = torch.enable_grad if mode == "grad" else torch.inference_mode
    with ctx():
        qkv = torch.randn(4, 3 * H)
        before = qkv.clone()
        x, w = torch.randn(4, H), torch.rand(H) + 0.5
        q = qkv[:, :H]
        torch.ops.opreg.rms_norm.out(x, w, 1e-6, out=q)
        torch.testing.assert_close(q, torch.from_numpy(_rms(x.numpy(), w.numpy(), 1e-6)))
        assert torch.equal(qkv[:, H:], before[:, H:])
        # In place on a column view: fused_add_rms_norm_(input=k view, residual).
        k, res = qkv[:, H:2 * H], torch.randn(4, H)
        k0, res0 = k.clone(), res.clone()
        torch.ops.opreg.fused_add_rms_norm_(k, res, w, 1e-6)
        torch.testing.assert_close(res, k0 + res0)
        torch.testing.assert_close(k, torch.from_numpy(_rms((k0 + res0).numpy(), w.numpy(),
                                                               1e-6)))
        assert torch.equal(qkv[:, 2 * H:], before[:, 2 * H:])


@pytest.mark.parametrize("mode", ["grad", "inference_mode"])
def test_views_of_one_buffer_that_share_no_element_are_not_refused(mode):
    # The q, k and v columns of one qkv buffer span interleaved bytes but share no element: an
    # op may read one and write another (torch's ops accept this too). Views that do share an
    # element are refused, naming both arguments, and nothing is written.
    import opreg.torch  # noqa: F401 - opreg's ops in torch.ops

    ctx = torch.enable_grad if mode == "grad" else torch.inference_mode
    with ctx():
        qkv = torch.randn(4, 3 * H)
        w = torch.rand(H) + 0.5
        q, k, v = qkv[:, :H], qkv[:, H:2 * H], qkv[:, 2 * H:]
        q0, k0, v0 = q.clone(), k.clone(), v.clone()
        torch.ops.opreg.rms_norm.out(q, w, 1e-6, out=v)
        torch.testing.assert_close(v, torch.from_numpy(_rms(q0.numpy(), w.numpy(), 1e-6)))
        assert torch.equal(q, q0) and torch.equal(k, k0)
        torch.ops.opreg.fused_add_rms_norm_(q, k, w, 1e-6)  # input q, residual k
        torch.testing.assert_close(k, q0 + k0)
        torch.testing.assert_close(q, torch.from_numpy(_rms((q0 + k0).numpy(), w.numpy(), 1e-6)))
        # Even and odd columns: interleaved element by element.
        buf = torch.randn(4, 2 * H)
        even, odd = buf[:, 0::2], buf[:, 1::2]
        e0, o0 = even.clone(), odd.clone()
        torch.ops.opreg.mul.out(even, even, out=odd)
        assert torch.equal(even, e0) and torch.equal(odd, e0 * e0)
        assert not torch.equal(odd, o0)
        # Shifted by half a column block: elements are shared.
        before = qkv.clone()
        with pytest.raises(ValueError, match=r"\[opreg::rms_norm.out\] argument 'out' \(#3\): "
                                             r"expected a tensor that does not overlap argument "
                                             r"'input' \(#0\)"):
            torch.ops.opreg.rms_norm.out(q, w, 1e-6, out=qkv[:, H // 2:H // 2 + H])
        assert torch.equal(qkv, before)
