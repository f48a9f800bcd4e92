"""Numerical checks of the compat_kernels example library (examples/torch_compat), written
against torch.ops as a test of the libtorch build would be. Run as a script in a fresh process:

    python checks.py --backend torch --library build-torch/libcompat_kernels.so
    python checks.py --backend opreg --library build-opreg/libcompat_kernels.so

`torch` loads the library with torch.ops.load_library (it was built against libtorch); `opreg`
imports opreg.torch, then loads the library (built against opreg::torch_compat) with
opreg.load_library, or with torch.ops.load_library as the libtorch build is (`--loader torch`).
Everything after loading is the same code. Prints one JSON line: the checks that ran and the
schema of every op, for the caller to compare across backends. Exits non-zero on a failure.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F

NS = "compat_kernels"
CACHE_NS = "compat_kernels_cache_ops"
CHECKS: List[Callable[[], None]] = []


def check(fn: Callable[[], None]) -> Callable[[], None]:
    CHECKS.append(fn)
    return fn


def ops():  # noqa: ANN201 - torch's namespace object
    return getattr(torch.ops, NS)


def tol(dtype: torch.dtype) -> Dict[str, float]:
    return {"atol": 2e-2, "rtol": 2e-2} if dtype != torch.float32 else {"atol": 1e-5, "rtol": 1e-5}


def inputs(shape, dtype, seed=0):  # noqa: ANN001, ANN201
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)


GATED = {
    "silu_and_mul": lambda a, b: F.silu(a) * b,
    "mul_and_silu": lambda a, b: a * F.silu(b),
    "gelu_and_mul": lambda a, b: F.gelu(a) * b,
    "gelu_tanh_and_mul": lambda a, b: F.gelu(a, approximate="tanh") * b,
}


@check
def gated_activations() -> None:
    for name, ref in GATED.items():
        for dtype in (torch.float32, torch.bfloat16, torch.float16):
            for shape in ((1, 2 * 8), (3, 5, 2 * 64)):  # decode-sized and batched
                x = inputs(shape, dtype)
                out = torch.empty(shape[:-1] + (shape[-1] // 2,), dtype=dtype)
                getattr(ops(), name)(out, x)
                d = shape[-1] // 2
                want = ref(x[..., :d].float(), x[..., d:].float()).to(dtype)
                torch.testing.assert_close(out, want, **tol(dtype), msg=name)


@check
def fatrelu_and_mul() -> None:
    x = inputs((4, 32), torch.float32)
    out = torch.empty(4, 16)
    ops().fatrelu_and_mul(out, x, 0.3)
    a, b = x[:, :16], x[:, 16:]
    torch.testing.assert_close(out, torch.where(a > 0.3, a, torch.zeros_like(a)) * b)


@check
def swigluoai_and_mul_defaults() -> None:
    x = inputs((4, 32), torch.float32) * 6
    out = torch.empty(4, 16)
    ops().swigluoai_and_mul(out, x)  # alpha=1.702, limit=7.0 from the schema's defaults
    gate = x[:, 0::2].clamp(max=7.0)
    up = x[:, 1::2].clamp(-7.0, 7.0)
    torch.testing.assert_close(out, (up + 1) * gate * torch.sigmoid(gate * 1.702))
    ops().swigluoai_and_mul(out, x, alpha=1.0, limit=2.0)
    gate = x[:, 0::2].clamp(max=2.0)
    up = x[:, 1::2].clamp(-2.0, 2.0)
    torch.testing.assert_close(out, (up + 1) * gate * torch.sigmoid(gate))


@check
def elementwise_gelus() -> None:
    x = inputs((3, 40), torch.float32)
    refs = {
        "gelu_new": F.gelu(x, approximate="tanh"),
        "gelu_fast": F.gelu(x, approximate="tanh"),
        "gelu_quick": x * torch.sigmoid(1.702 * x),
    }
    for name, want in refs.items():
        out = torch.empty_like(x)
        getattr(ops(), name)(out, x)
        torch.testing.assert_close(out, want, atol=1e-5, rtol=1e-5, msg=name)


def rms_ref(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    xf = x.float()
    normed = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype)
    return (normed.float() * w.float()).to(x.dtype)


@check
def rms_norm() -> None:
    for dtype in (torch.float32, torch.bfloat16):
        for rows in (1, 37):
            x = inputs((rows, 96), dtype)
            w = inputs((96,), dtype, seed=1)
            out = torch.empty_like(x)
            ops().rms_norm(out, x, w, 1e-6)
            torch.testing.assert_close(out, rms_ref(x, w, 1e-6), **tol(dtype))


@check
def fused_add_rms_norm() -> None:
    for dtype in (torch.float32, torch.bfloat16):
        x = inputs((5, 64), dtype)
        res = inputs((5, 64), dtype, seed=2)
        w = inputs((64,), dtype, seed=3)
        want_res = (x.float() + res.float()).to(dtype)
        want_x = rms_ref(want_res, w, 1e-5)
        ops().fused_add_rms_norm(x, res, w, 1e-5)
        torch.testing.assert_close(res, want_res, **tol(dtype))
        torch.testing.assert_close(x, want_x, **tol(dtype))


def rope_ref(x, positions, cache, head_size, is_neox):  # noqa: ANN001, ANN201
    tokens = positions.numel()
    rot_dim = cache.shape[1]
    half = rot_dim // 2
    x = x.view(tokens, -1, head_size).clone()
    cos = cache[positions, :half].unsqueeze(1)
    sin = cache[positions, half:].unsqueeze(1)
    rot = x[..., :rot_dim]
    if is_neox:
        a, b = rot[..., :half], rot[..., half:]
        x[..., :rot_dim] = torch.cat([a * cos - b * sin, b * cos + a * sin], dim=-1)
    else:
        a, b = rot[..., 0::2], rot[..., 1::2]
        x[..., :rot_dim] = torch.stack([a * cos - b * sin, b * cos + a * sin], dim=-1).flatten(-2)
    return x.view(tokens, -1)


@check
def rotary_embedding() -> None:
    head_size, rot_dim, tokens = 32, 16, 7
    angles = torch.arange(64).float()[:, None] * torch.linspace(0.1, 1.0, rot_dim // 2)[None]
    cache = torch.cat([angles.cos(), angles.sin()], dim=-1)
    positions = torch.tensor([0, 5, 9, 3, 63, 1, 2])
    for is_neox in (True, False):
        q = inputs((tokens, 4 * head_size), torch.float32)
        k = inputs((tokens, 2 * head_size), torch.float32, seed=4)
        want_q = rope_ref(q, positions, cache, head_size, is_neox)
        want_k = rope_ref(k, positions, cache, head_size, is_neox)
        ops().rotary_embedding(positions, q, k, head_size, cache, is_neox)
        torch.testing.assert_close(q, want_q)
        torch.testing.assert_close(k, want_k)
        q2 = inputs((tokens, 4 * head_size), torch.float32)
        want_q2 = rope_ref(q2, positions, cache, head_size, is_neox)
        ops().rotary_embedding(positions, q2, None, head_size, cache, is_neox)  # Tensor!? key
        torch.testing.assert_close(q2, want_q2)


def fp8_ref(x: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (x.float() / scale).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)


@check
def static_scaled_fp8_quant() -> None:
    x = inputs((6, 32), torch.float32) * 100
    out = torch.empty(6, 32, dtype=torch.float8_e4m3fn)
    scale = torch.tensor([0.05])
    ops().static_scaled_fp8_quant(out, x, scale)
    assert torch.equal(out.float(), fp8_ref(x, scale).float())
    # Per-token scales: group_shape=(1, 32), a 1-d scale (the `(int, int)?` tuple argument).
    per_token = torch.rand(6) + 0.1
    ops().static_scaled_fp8_quant(out, x, per_token, (1, 32))
    assert torch.equal(out.float(), fp8_ref(x, per_token[:, None]).float())


@check
def dynamic_scaled_fp8_quant() -> None:
    x = inputs((4, 16), torch.bfloat16) * 50
    out = torch.empty(4, 16, dtype=torch.float8_e4m3fn)
    scale = torch.zeros(1)
    ops().dynamic_scaled_fp8_quant(out, x, scale)
    want_scale = x.float().abs().max() / 448.0
    torch.testing.assert_close(scale[0], want_scale)
    assert torch.equal(out.float(), fp8_ref(x, scale).float())


@check
def static_scaled_int8_quant() -> None:
    x = inputs((3, 20), torch.float32) * 3
    out = torch.empty(3, 20, dtype=torch.int8)
    scale = torch.tensor([0.02])
    ops().static_scaled_int8_quant(out, x, scale, None)
    assert torch.equal(out, (x / 0.02).round().clamp(-128, 127).to(torch.int8))
    azp = torch.tensor([5], dtype=torch.int32)
    ops().static_scaled_int8_quant(out, x, scale, azp)
    assert torch.equal(out, ((x / 0.02).round() + 5).clamp(-128, 127).to(torch.int8))


@check
def apply_repetition_penalties() -> None:
    logits = inputs((3, 50), torch.float32)
    g = torch.Generator().manual_seed(7)
    prompt = torch.rand(3, 50, generator=g) < 0.2
    output = torch.rand(3, 50, generator=g) < 0.2
    penalties = torch.tensor([1.0, 1.5, 2.0])
    hit = prompt | output
    p = penalties[:, None].expand_as(logits)
    want = torch.where(hit, torch.where(logits > 0, logits / p, logits * p), logits)
    ops().apply_repetition_penalties_(logits, prompt, output, penalties)
    torch.testing.assert_close(logits, want)


@check
def weak_ref_tensor() -> None:
    x = inputs((4, 6), torch.float32)[:, 1:5]  # strided
    y = ops().weak_ref_tensor(x)
    assert y.data_ptr() == x.data_ptr() and y.shape == x.shape and y.stride() == x.stride()
    assert torch.equal(y, x)


@check
def cache_ops() -> None:
    cache_ops = getattr(torch.ops, CACHE_NS)
    tokens, heads, head_size, blocks, block_size = 5, 2, 8, 3, 4
    key = inputs((tokens, heads, head_size), torch.float32)
    value = inputs((tokens, heads, head_size), torch.float32, seed=5)
    key_cache = torch.zeros(blocks, block_size, heads, head_size)
    value_cache = torch.zeros(blocks, block_size, heads, head_size)
    slots = torch.tensor([0, 5, -1, 11, 6])
    one = torch.ones(1)
    cache_ops.reshape_and_cache_flash(key, value, key_cache, value_cache, slots, "auto", one, one)
    flat_k = key_cache.view(-1, heads, head_size)
    flat_v = value_cache.view(-1, heads, head_size)
    for t, s in enumerate(slots.tolist()):
        if s >= 0:
            assert torch.equal(flat_k[s], key[t]) and torch.equal(flat_v[s], value[t])
    assert flat_k[1].abs().sum() == 0
    try:
        cache_ops.reshape_and_cache_flash(key, value, key_cache, value_cache, slots, "fp8", one,
                                          one)
    except RuntimeError as e:
        assert "unsupported kv_cache_dtype 'fp8'" in str(e), e
    else:
        raise AssertionError("kv_cache_dtype='fp8' did not raise")

    src = torch.arange(4 * 16, dtype=torch.float32).view(4, 16)
    dst = torch.zeros(4, 16)
    mapping = torch.tensor([[0, 3], [2, 1]])
    cache_ops.swap_blocks(src, dst, 16 * 4, mapping)
    assert torch.equal(dst[3], src[0]) and torch.equal(dst[1], src[2])
    assert dst[0].abs().sum() == 0 and dst[2].abs().sum() == 0
    assert cache_ops.get_cache_block_bytes(16, 8, 128, 2) == 16 * 8 * 128 * 2


@check
def muladd() -> None:
    # The tutorial-style functional op (its fake and autograd come from the Python package).
    a, b = inputs((5, 7), torch.float32), inputs((5, 7), torch.float32, seed=1)
    torch.testing.assert_close(ops().muladd(a, b, 0.25), a * b + 0.25)
    torch.testing.assert_close(ops().muladd(a.t(), b.t(), -1.0), a.t() * b.t() - 1.0)


@check
def errors_name_the_problem() -> None:
    x = torch.randn(2, 7)
    try:
        ops().silu_and_mul(torch.empty(2, 3), x)
    except RuntimeError as e:
        assert "silu_and_mul: the last dimension of input must be even, got 7" in str(e), e
    else:
        raise AssertionError("odd last dimension did not raise")
    try:
        ops().rms_norm(torch.empty(2, 8, dtype=torch.int32), torch.ones(2, 8, dtype=torch.int32),
                       torch.ones(8, dtype=torch.int32), 1e-6)
    except NotImplementedError as e:  # AT_DISPATCH's error, as libtorch raises it
        assert "\"rms_norm\" not implemented for 'Int'" in str(e), e
    else:
        raise AssertionError("int32 rms_norm did not raise")


def schemas() -> Dict[str, str]:
    out = {}
    for ns in (NS, CACHE_NS):
        packet_ns = getattr(torch.ops, ns)
        for name in dir(packet_ns):
            packet = getattr(packet_ns, name)
            if not isinstance(packet, torch._ops.OpOverloadPacket):
                continue
            for overload in packet.overloads():
                out[f"{ns}::{name}.{overload}"] = str(getattr(packet, overload)._schema)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", choices=("torch", "opreg"), required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("--loader", choices=("torch", "opreg"), default="opreg",
                        help="with --backend opreg: what loads the library")
    args = parser.parse_args()
    if args.backend == "torch":
        torch.ops.load_library(args.library)
    else:
        import opreg
        import opreg.torch  # noqa: F401 - opreg ops become torch ops

        if args.loader == "torch":
            torch.ops.load_library(args.library)  # the ops reach torch.ops as it returns
        else:
            opreg.load_library(args.library)
    ran = []
    for fn in CHECKS:
        fn()
        ran.append(fn.__name__)
    print(json.dumps({"backend": args.backend, "loader": args.loader, "checks": ran,
                      "schemas": schemas()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
