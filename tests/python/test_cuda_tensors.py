"""CUDA torch tensors through opreg, beyond the CPU tests that also run on CUDA (the `device`
fixture): work is queued on torch's current stream with no synchronisation, through opreg.ops and
through torch.ops (opreg.torch); each built-in CUDA kernel agrees with its CPU kernel on
decode-sized inputs, f32 and bf16; CUDA-only errors name the op and the argument.

Every test here is marked `cuda` and skipped, with the reason, without a CUDA device."""
import pytest

import opreg
from conftest import cuda_skip_reason

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(cuda_skip_reason() is not None, reason=str(cuda_skip_reason())),
    pytest.mark.skipif("opreg::add" not in opreg.list_ops(),
                       reason="opreg::ops not linked in this build"),
]

# GPU clock cycles torch.cuda._sleep spins for: a few hundred milliseconds on any current GPU,
# far longer than the host needs to queue the calls behind it.
_SLEEP_CYCLES = 500_000_000


def _rms_norm_ref(x, w, eps=1e-6):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)


def _rms_norm_call(via):
    if via == "torch.ops":
        import opreg.torch as opreg_torch  # registers torch.ops.opreg
        opreg_torch.sync()
        return torch.ops.opreg.rms_norm
    return opreg.ops.opreg.rms_norm


@pytest.mark.parametrize("via", ["opreg.ops", "torch.ops"])
def test_work_is_queued_on_torchs_current_stream_without_synchronising(via):
    rms_norm = _rms_norm_call(via)
    x = torch.randn(64, 4096, device="cuda")
    w = torch.rand(4096, device="cuda") + 0.5
    expect = _rms_norm_ref(x * 2, w)
    rms_norm(x, w, 1e-6)  # warm-up: module load and first-call caches stay out of the check
    # The input is NaN until the side stream, after a long sleep, writes x * 2 into it: a kernel
    # launched anywhere but on that stream, after that write, reads NaN.
    x2 = torch.full_like(x, float("nan"))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        torch.cuda._sleep(_SLEEP_CYCLES)
        x2.copy_(x).mul_(2)
        y = rms_norm(x2, w, 1e-6)
        done = torch.cuda.Event()
        done.record(side)
        # Checked before anything else touches the GPU: had the call synchronised the stream or
        # the device, the sleep would be over.
        still_queued = not done.query()
    assert still_queued, f"{via}: the call waited for the GPU (the sleep queued before it ended)"
    assert y.device == x.device
    side.synchronize()
    torch.testing.assert_close(y, expect)


def test_the_callers_opreg_stream_setting_is_restored_after_a_torch_call():
    x = torch.randn(8, 64, device="cuda")
    w = torch.rand(64, device="cuda") + 0.5
    side = torch.cuda.Stream()
    before = opreg.cuda.current_stream(x.device.index)
    with torch.cuda.stream(side):
        opreg.ops.opreg.rms_norm(x, w, 1e-6)
    assert opreg.cuda.current_stream(x.device.index) == before
    torch.cuda.synchronize()


def _cases(dtype):
    g = torch.Generator(device="cuda").manual_seed(0)

    def r(*shape, dt=dtype):
        return torch.randn(*shape, generator=g, device="cuda").to(dt)

    x, y, res = r(8, 4096), r(8, 4096), r(8, 4096)
    w = (torch.rand(4096, generator=g, device="cuda") + 0.5).to(dtype)
    lw, lb = r(64, 256), r(64)
    xl = r(8, 256)
    return {
        "add": (opreg.ops.opreg.add, (x, y), {"alpha": 2}),
        "add (broadcast, strided)": (opreg.ops.opreg.add, (x.t(), y[0].unsqueeze(1)), {}),
        "mul": (opreg.ops.opreg.mul, (x, y), {}),
        "rms_norm": (opreg.ops.opreg.rms_norm, (x, w, 1e-6), {}),
        "silu_and_mul": (opreg.ops.opreg.silu_and_mul, (x,), {}),
        "softmax": (opreg.ops.opreg.softmax, (x, -1), {}),
        "split_add": (opreg.ops.opreg.split_add, (x, y), {}),
        "topk": (opreg.ops.opreg.topk, (x, 8), {}),
        "linear": (opreg.ops.opreg.linear, (xl, lw, lb), {}),
        "per_token_quant": (opreg.ops.opreg.per_token_quant, (x, torch.int8), {}),
        "fused_add_rms_norm_": (opreg.ops.opreg.fused_add_rms_norm_, (x.clone(), res.clone(), w,
                                                                     1e-6), {}),
    }


def _to_cpu(args):
    return tuple(a.cpu() if isinstance(a, torch.Tensor) else a for a in args)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
def test_cuda_kernels_agree_with_the_cpu_kernels(dtype):
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 2e-2, "atol": 2e-2}
    for name, (op, args, kwargs) in _cases(dtype).items():
        if name == "per_token_quant" and dtype != torch.float32:
            continue
        cpu_args = _to_cpu(args)
        got = op(*args, **kwargs)
        expect = op(*cpu_args, **kwargs)
        if name == "fused_add_rms_norm_":  # in place: the written inputs are the results
            got, expect = args[:2], cpu_args[:2]
        got = got if isinstance(got, tuple) else (got,)
        expect = expect if isinstance(expect, tuple) else (expect,)
        for i, (g, e) in enumerate(zip(got, expect)):
            assert isinstance(g, torch.Tensor) and g.is_cuda, (name, i, type(g))
            assert g.dtype == e.dtype and g.shape == e.shape, (name, i, g.dtype, g.shape)
            if name == "per_token_quant" and i == 0:  # int8: one step apart at a rounding edge
                assert (g.cpu().int() - e.int()).abs().max().item() <= 1, name
            elif name == "topk" and i == 1:  # indices: the values they pick must agree
                torch.testing.assert_close(torch.gather(cpu_args[0], -1, g.cpu()), expect[0],
                                           msg=name, **tol)
            else:
                torch.testing.assert_close(g.cpu(), e, msg=f"{name} #{i}", **tol)


def test_cuda_errors_name_the_op_and_the_argument():
    x = torch.randn(4, 64, device="cuda")
    w = torch.rand(64, device="cuda") + 0.5
    with pytest.raises((TypeError, ValueError, RuntimeError),
                       match=r"\[opreg::rms_norm\] expected all tensor arguments on one device, "
                             r"but argument 'input' \(#0\) is on cuda:0 and argument 'weight' "
                             r"\(#1\) on cpu"):
        opreg.ops.opreg.rms_norm(x, w.cpu(), 1e-6)
    with pytest.raises((TypeError, ValueError, RuntimeError),
                       match=r"\[opreg::rms_norm(\.out)?\] argument 'input' \(#0\): expected a "
                             r"contiguous tensor .*got strides \[1, 4\]"):
        opreg.ops.opreg.rms_norm(torch.randn(64, 4, device="cuda").t(), torch.ones(
            64, device="cuda"), 1e-6)
    # The same through torch.ops (the C bridge passes the view as it is).
    with pytest.raises((TypeError, ValueError, RuntimeError),
                       match=r"argument 'input' \(#0\): expected a contiguous tensor"):
        _rms_norm_call("torch.ops")(torch.randn(64, 4, device="cuda").t(),
                                    torch.ones(64, device="cuda"), 1e-6)
