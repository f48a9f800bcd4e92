"""Numerical checks of the stable_kernels example library (examples/torch_stable, written for
torch's stable ABI), against torch.ops as a test of a torch build would be. Run as a script in a
fresh process:

    python checks.py --runtime torch --library build-torch/libstable_kernels.so
    python checks.py --runtime opreg --library build-opreg/libstable_kernels.so

`--runtime torch`: the library runs on torch's own stable ABI. It is loaded with
torch.ops.load_library after libtorch_cpu is made global (a library built against the stable
headers alone, linking no torch library, finds the C shim there). `--runtime opreg`: opreg.torch
is imported and the library loaded with opreg.load_library, so its kernels run on opreg's stable
ABI and reach torch.ops through opreg.torch. Everything after loading is the same code. Prints
one JSON line: the checks that ran, the schema of every op, and a digest of every result, for
the caller to compare across runtimes. Exits non-zero on a failure.
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from stable_runtime import parse_check_args  # noqa: E402 - tests/python, beside this directory

NS = "stable_kernels"
CHECKS: List[Callable[[], None]] = []
DIGESTS: Dict[str, str] = {}


def check(fn: Callable[[], None]) -> Callable[[], None]:
    CHECKS.append(fn)
    return fn


def ops():  # noqa: ANN201 - torch's namespace object
    return getattr(torch.ops, NS)


def record(name: str, *tensors: torch.Tensor) -> None:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().contiguous().cpu().view(torch.uint8).numpy().tobytes())
    DIGESTS[name] = h.hexdigest()[:16]


def tol(dtype: torch.dtype) -> Dict[str, float]:
    return {"atol": 2e-2, "rtol": 2e-2} if dtype != torch.float32 else {"atol": 1e-5, "rtol": 1e-5}


def inputs(shape, dtype=torch.float32, seed=0):  # noqa: ANN001, ANN201
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)


GATED = {
    "silu_and_mul": (lambda a, b: F.silu(a) * b),
    "mul_and_silu": (lambda a, b: a * F.silu(b)),
    "gelu_and_mul": (lambda a, b: F.gelu(a) * b),
    "gelu_tanh_and_mul": (lambda a, b: F.gelu(a, approximate="tanh") * b),
}


@check
def gated_activations() -> None:
    for name, ref in GATED.items():
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            for shape in ((1, 16), (3, 5, 128)):  # decode-sized and batched
                x = inputs(shape, dtype)
                d = shape[-1] // 2
                out = torch.empty(shape[:-1] + (d,), dtype=dtype)
                getattr(ops(), name)(out, x)
                want = ref(x[..., :d].float(), x[..., d:].float()).to(dtype)
                torch.testing.assert_close(out, want, **tol(dtype), msg=name)
                record(f"{name}/{dtype}/{shape}", out)


@check
def gated_activation_on_a_column_view() -> None:
    # A view into a wider buffer (rows strided), as vLLM passes slices of fused projections.
    wide = inputs((6, 96))
    x = wide[:, 16:80]
    out = torch.empty(6, 32)
    ops().silu_and_mul(out, x)
    torch.testing.assert_close(out, F.silu(x[:, :32]) * x[:, 32:])
    record("silu_and_mul/view", out)


@check
def fatrelu_and_mul() -> None:
    x = inputs((4, 32))
    out = torch.empty(4, 16)
    ops().fatrelu_and_mul(out, x, 0.3)
    a, b = x[:, :16], x[:, 16:]
    torch.testing.assert_close(out, torch.where(a > 0.3, a, torch.zeros_like(a)) * b)
    record("fatrelu_and_mul", out)


@check
def elementwise_gelus() -> None:
    x = inputs((7, 33))
    for name, ref in (("gelu_new", lambda v: F.gelu(v, approximate="tanh")),
                      ("gelu_fast", lambda v: F.gelu(v, approximate="tanh")),
                      ("gelu_quick", lambda v: v * torch.sigmoid(1.702 * v))):
        out = torch.empty_like(x)
        getattr(ops(), name)(out, x)
        torch.testing.assert_close(out, ref(x), atol=1e-4, rtol=1e-4, msg=name)
        record(name, out)


def ref_rms_norm(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    xf = x.float()
    normed = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    return (normed.float() * w.float()).to(x.dtype)


@check
def rms_norm() -> None:
    for dtype in (torch.float32, torch.bfloat16):
        for tokens in (1, 64):
            x = inputs((tokens, 256), dtype)
            w = inputs((256,), dtype, seed=1)
            out = torch.empty_like(x)
            ops().rms_norm(out, x, w, 1e-6)
            torch.testing.assert_close(out, ref_rms_norm(x, w, 1e-6), **tol(dtype))
            y = ops().rms_norm_out_of_place(x, w, 1e-6)
            torch.testing.assert_close(y, out, atol=0, rtol=0)
            record(f"rms_norm/{dtype}/{tokens}", out, y)


@check
def fused_add_rms_norm() -> None:
    x = inputs((8, 128))
    r = inputs((8, 128), seed=2)
    w = inputs((128,), seed=3)
    want_res = x + r
    want = ref_rms_norm(want_res, w, 1e-5)
    ops().fused_add_rms_norm(x, r, w, 1e-5)
    torch.testing.assert_close(r, want_res)
    torch.testing.assert_close(x, want, atol=1e-5, rtol=1e-5)
    record("fused_add_rms_norm", x, r)


def ref_rotary(pos, q, head_size, cache, neox):  # noqa: ANN001, ANN201
    rot = cache.shape[1]
    half = rot // 2
    cos, sin = cache[pos, :half], cache[pos, half:]
    q = q.view(q.shape[0], -1, head_size).clone()
    if neox:
        a, b = q[..., :half].clone(), q[..., half:rot].clone()
        q[..., :half] = a * cos[:, None] - b * sin[:, None]
        q[..., half:rot] = b * cos[:, None] + a * sin[:, None]
    else:
        a, b = q[..., 0:rot:2].clone(), q[..., 1:rot:2].clone()
        q[..., 0:rot:2] = a * cos[:, None] - b * sin[:, None]
        q[..., 1:rot:2] = b * cos[:, None] + a * sin[:, None]
    return q.view(q.shape[0], -1)


@check
def rotary_embedding() -> None:
    for neox in (True, False):
        tokens, heads, head_size = 5, 4, 32
        pos = torch.tensor([0, 3, 7, 1, 9], dtype=torch.int64)
        cache = inputs((16, head_size), seed=4)
        q = inputs((tokens, heads * head_size), seed=5)
        k = inputs((tokens, 2 * head_size), seed=6)
        want_q = ref_rotary(pos, q, head_size, cache, neox)
        want_k = ref_rotary(pos, k, head_size, cache, neox)
        ops().rotary_embedding(pos, q, k, head_size, cache, neox)
        torch.testing.assert_close(q, want_q, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(k, want_k, atol=1e-5, rtol=1e-5)
        q2 = inputs((tokens, heads * head_size), seed=5)
        ops().rotary_embedding(pos, q2, None, head_size, cache, neox)  # key=None
        torch.testing.assert_close(q2, want_q, atol=1e-5, rtol=1e-5)
        record(f"rotary/{neox}", q, k)


@check
def topk_softmax() -> None:
    for renorm in (False, True):
        g = inputs((6, 16), seed=7)
        w = torch.empty(6, 2)
        idx = torch.empty(6, 2, dtype=torch.int32)
        tok = torch.empty(6, 2, dtype=torch.int32)
        ops().topk_softmax(w, idx, tok, g, renorm)
        p = torch.softmax(g, -1)
        vals, ind = p.topk(2, -1)
        if renorm:
            vals = vals / vals.sum(-1, keepdim=True)
        torch.testing.assert_close(w, vals)
        assert torch.equal(idx, ind.to(torch.int32))
        record(f"topk_softmax/{renorm}", w, idx, tok)
    # uint32 indices, as vLLM's topk_softmax takes them: torch.uint32 crosses to the kernel.
    g = inputs((3, 8), seed=8)
    w = torch.empty(3, 2)
    uidx = torch.empty(3, 2, dtype=torch.uint32)
    tok = torch.empty(3, 2, dtype=torch.int32)
    ops().topk_softmax(w, uidx, tok, g, False)
    assert torch.equal(uidx.to(torch.int64), torch.softmax(g, -1).topk(2, -1).indices)
    record("topk_softmax/uint32", w, uidx.view(torch.int32), tok)


@check
def int8_quant() -> None:
    x = inputs((4, 64))
    out = torch.empty(4, 64, dtype=torch.int8)
    scale = torch.tensor([0.02])
    ops().static_scaled_int8_quant(out, x, scale, None)
    want = torch.clamp(torch.round(x / 0.02), -128, 127).to(torch.int8)
    assert torch.equal(out, want)
    scales = torch.empty(4, 1)
    dyn = torch.empty(4, 64, dtype=torch.int8)
    ops().dynamic_scaled_int8_quant(dyn, x, scales, None)
    torch.testing.assert_close(scales, x.abs().amax(-1, keepdim=True) / 127)
    assert (dyn.float() * scales - x).abs().max() <= scales.max()
    record("int8_quant", out, dyn, scales)


@check
def permute_cols() -> None:
    a = inputs((3, 10), torch.bfloat16)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(3)).to(torch.int32)
    y = ops().permute_cols(a, perm)
    assert torch.equal(y, a[:, perm.long()])
    record("permute_cols", y)


@check
def kernel_errors_name_the_op() -> None:
    x = inputs((2, 7))
    try:
        ops().silu_and_mul(torch.empty(2, 3), x)
    except RuntimeError as e:
        assert "last dim must be even" in str(e), str(e)
    else:
        raise AssertionError("an odd last dim was accepted")


def main() -> int:
    args = parse_check_args()
    for fn in CHECKS:
        fn()
    schemas = {}
    for name in dir(ops()):
        packet = getattr(ops(), name)
        if hasattr(packet, "default"):
            schemas[name] = str(packet.default._schema)
    print(json.dumps({"runtime": args.runtime, "checks": [f.__name__ for f in CHECKS],
                      "schemas": schemas, "digests": DIGESTS}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
