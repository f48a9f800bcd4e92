"""Runs the ops of vLLM's CPU extension (built by vllm_cpu_build.sh) through torch.ops on one
runtime, checks each against a torch reference where there is a simple one, and saves every
output; `--compare A B` then says, op by op, whether two runs (the torch build on torch and the
opreg build on opreg) gave bit-identical outputs, or the same error.

    python vllm_cpu_checks.py --runtime torch --library build-torch/_C.so --out torch.pt
    python vllm_cpu_checks.py --runtime opreg --library build-opreg/_C.so --out opreg.pt
    python vllm_cpu_checks.py --compare torch.pt opreg.pt

Inputs come from seeded generators, so both runs see the same values. Prints one line per check
and, last, a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import traceback
from typing import Callable, Dict, List

import torch
import torch.nn.functional as F

CHECKS: List[Callable[[], Dict[str, torch.Tensor]]] = []


def check(fn: Callable[[], Dict[str, torch.Tensor]]) -> Callable[[], Dict[str, torch.Tensor]]:
    CHECKS.append(fn)
    return fn


def C():  # noqa: N802, ANN201 - torch's namespace object
    return torch.ops._C


def randn(shape, dtype=torch.float32, seed=0):  # noqa: ANN001, ANN201
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float32).to(dtype)


def close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    tol = {torch.float32: (1e-5, 1e-5), torch.bfloat16: (2e-2, 2e-2),
           torch.float16: (2e-3, 2e-3)}[dtype]
    torch.testing.assert_close(actual.float(), expected.float(), rtol=tol[0], atol=tol[1])


ACTIVATIONS = {
    "silu_and_mul": lambda a, b: F.silu(a) * b,
    "gelu_and_mul": lambda a, b: F.gelu(a) * b,
    "gelu_tanh_and_mul": lambda a, b: F.gelu(a, approximate="tanh") * b,
}
ELEMENTWISE = {
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu_new": lambda x: 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi)
                                                    * (x + 0.044715 * x.pow(3)))),
    "gelu_fast": lambda x: 0.5 * x * (1 + torch.tanh(0.7978845608 * x * (1 + 0.044715 * x * x))),
    "gelu_quick": lambda x: x * torch.sigmoid(1.702 * x),
}


@check
def gated_activations() -> Dict[str, torch.Tensor]:
    out = {}
    for name, ref in ACTIVATIONS.items():
        for dtype in (torch.float32, torch.bfloat16):
            x = randn((7, 2 * 96), dtype)
            y = torch.empty(7, 96, dtype=dtype)
            getattr(C(), name)(y, x)
            close(y, ref(x[:, :96].float(), x[:, 96:].float()), dtype)
            out[f"{name}.{dtype}"] = y
    return out


@check
def elementwise_gelus() -> Dict[str, torch.Tensor]:
    out = {}
    for name, ref in ELEMENTWISE.items():
        for dtype in (torch.float32, torch.bfloat16):
            x = randn((5, 64), dtype, seed=1)
            y = torch.empty_like(x)
            getattr(C(), name)(y, x)
            close(y, ref(x.float()), dtype)
            out[f"{name}.{dtype}"] = y
    return out


def rms_ref(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    x = x.float()
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w.float()


@check
def rms_norm() -> Dict[str, torch.Tensor]:
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        x, w = randn((6, 128), dtype, 2), randn((128,), dtype, 3)
        y = torch.empty_like(x)
        C().rms_norm(y, x, w, 1e-6)
        close(y, rms_ref(x, w, 1e-6), dtype)
        out[str(dtype)] = y
    return out


@check
def fused_add_rms_norm() -> Dict[str, torch.Tensor]:
    out = {}
    for dtype in (torch.float32, torch.bfloat16):
        x, r, w = randn((6, 128), dtype, 4), randn((6, 128), dtype, 5), randn((128,), dtype, 6)
        s = (x.float() + r.float())
        C().fused_add_rms_norm(x, r, w, 1e-6)
        close(r, s, dtype)
        close(x, rms_ref(s.to(dtype), w, 1e-6), dtype)
        out[f"x.{dtype}"], out[f"residual.{dtype}"] = x, r
    return out


def rope_ref(x, positions, cache, head_size, is_neox):  # noqa: ANN001, ANN201
    t = x.shape[0]
    x = x.view(t, -1, head_size).float()
    rot = cache.shape[1]
    cos, sin = cache[positions].float().chunk(2, dim=-1)
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    xr = x[..., :rot]
    if is_neox:
        x1, x2 = xr.chunk(2, dim=-1)
        rotated = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)
    else:
        x1, x2 = xr[..., 0::2], xr[..., 1::2]
        rotated = torch.stack([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1).flatten(-2)
    return torch.cat([rotated, x[..., rot:]], dim=-1).view(t, -1)


@check
def rotary_embedding() -> Dict[str, torch.Tensor]:
    out = {}
    head_size, rot = 64, 64
    for is_neox in (True, False):
        positions = torch.tensor([0, 3, 7, 2], dtype=torch.int64)
        q, k = randn((4, 4 * head_size), seed=7), randn((4, 2 * head_size), seed=8)
        cache = randn((16, rot), seed=9)
        q_ref = rope_ref(q, positions, cache, head_size, is_neox)
        k_ref = rope_ref(k, positions, cache, head_size, is_neox)
        C().rotary_embedding(positions, q, k, head_size, cache, is_neox)
        close(q, q_ref, torch.float32)
        close(k, k_ref, torch.float32)
        out[f"q.{is_neox}"], out[f"k.{is_neox}"] = q, k
    return out


@check
def greedy_argmax() -> Dict[str, torch.Tensor]:
    logits = randn((5, 1000), seed=10)
    logits[2, 17] = float("nan")  # torch.argmax: NaN is the maximum
    one = C().greedy_argmax(logits[:1].clone())  # one row: the kernel calls Tensor::argmax
    many = C().greedy_argmax(logits)
    assert torch.equal(one, logits[:1].argmax(-1)), (one, logits[:1].argmax(-1))
    assert torch.equal(many, logits.argmax(-1)), (many, logits.argmax(-1))
    return {"one": one, "many": many}


@check
def fused_gumbel_argmax() -> Dict[str, torch.Tensor]:
    logits = randn((4, 500), seed=11)
    seeds = torch.tensor([1, 2, 3, 4], dtype=torch.int64)
    y = C().fused_gumbel_argmax(logits, seeds)
    assert y.shape == (4,) and int(y.min()) >= 0 and int(y.max()) < 500, y
    return {"tokens": y}


FP8_MAX = torch.finfo(torch.float8_e4m3fn).max


@check
def static_scaled_fp8_quant() -> Dict[str, torch.Tensor]:
    x = randn((8, 64), seed=12) * 4
    scale = torch.tensor([0.05])
    y = torch.empty(8, 64, dtype=torch.float8_e4m3fn)
    C().static_scaled_fp8_quant(y, x, scale)
    ref = (x / scale).clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)
    torch.testing.assert_close(y.float(), ref.float(), rtol=0.13, atol=0)
    return {"q": y.view(torch.uint8)}


@check
def dynamic_per_token_scaled_fp8_quant() -> Dict[str, torch.Tensor]:
    x = randn((8, 64), seed=13) * 3
    y = torch.empty(8, 64, dtype=torch.float8_e4m3fn)
    s = torch.empty(8, 1)
    C().dynamic_per_token_scaled_fp8_quant(y, x, s, None)
    torch.testing.assert_close(s, x.abs().amax(-1, keepdim=True) / FP8_MAX)
    torch.testing.assert_close((y.float() * s), x, rtol=0.13, atol=1e-3)
    return {"q": y.view(torch.uint8), "scale": s}


@check
def expand_kernel_impl() -> Dict[str, torch.Tensor]:
    inp = torch.tensor([5, -1, 9], dtype=torch.int64)
    cu = torch.tensor([2, 3, 6], dtype=torch.int64)
    out = torch.zeros(6, dtype=torch.int64)
    C().expand_kernel_impl(out, inp, cu, -1, 42)
    assert out.tolist() == [5, 5, 42, 9, 9, 9], out
    return {"out": out}


@check
def compute_slot_mapping_kernel_impl() -> Dict[str, torch.Tensor]:
    block_size = 4
    qsl = torch.tensor([0, 3, 5], dtype=torch.int32)
    positions = torch.tensor([0, 1, 5, 2, 9], dtype=torch.int64)
    block_table = torch.tensor([[7, 3, 0], [2, 8, 6]], dtype=torch.int32)
    slots = torch.full((5,), -7, dtype=torch.int64)
    C().compute_slot_mapping_kernel_impl(qsl, positions, block_table, slots, block_size)
    req = [0, 0, 0, 1, 1]
    ref = [int(block_table[r, p // block_size]) * block_size + p % block_size
           for r, p in zip(req, positions.tolist())]
    assert slots.tolist() == ref, (slots.tolist(), ref)
    return {"slots": slots}


@check
def isa_queries() -> Dict[str, torch.Tensor]:
    return {"vec": torch.tensor(C().cpu_attn_has_isa("vec")),
            "amx_fp8": torch.tensor(C().cpu_has_amx_fp8())}


@check
def paged_attention() -> Dict[str, torch.Tensor]:
    # Two requests through vLLM's CPU attention (the "vec" ISA): metadata, cache write, attention.
    heads, kv_heads, head_dim, block = 4, 2, 64, 32
    seq_lens = torch.tensor([5, 9], dtype=torch.int32)
    qsl = torch.tensor([0, 5, 14], dtype=torch.int32)
    tokens = 14
    q = randn((tokens, heads, head_dim), seed=14)
    k = randn((tokens, kv_heads, head_dim), seed=15)
    v = randn((tokens, kv_heads, head_dim), seed=16)
    key_cache = torch.zeros(4, kv_heads, block, head_dim)
    value_cache = torch.zeros(4, kv_heads, block, head_dim)
    block_table = torch.tensor([[0, 1], [2, 3]], dtype=torch.int32)
    slots = torch.tensor(list(range(0, 5)) + list(range(2 * block, 2 * block + 9)),
                         dtype=torch.int64)
    C().cpu_attn_reshape_and_cache(k, v, key_cache, value_cache, slots, "vec")
    meta = C().get_scheduler_metadata(2, heads, kv_heads, head_dim, seq_lens, torch.float32, qsl,
                                      True, -1, "vec", False, None)
    out = torch.empty(tokens, heads, head_dim)
    scale = head_dim ** -0.5
    C().cpu_attention_with_kv_cache(q, key_cache, value_cache, out, qsl, seq_lens, scale, True,
                                    None, -1, block_table, 0.0, meta, None, None)
    ref = []
    for r, (s, e) in enumerate([(0, 5), (5, 14)]):
        qr = q[s:e].transpose(0, 1)
        kr = k[s:e].transpose(0, 1).repeat_interleave(heads // kv_heads, 0)
        vr = v[s:e].transpose(0, 1).repeat_interleave(heads // kv_heads, 0)
        ref.append(F.scaled_dot_product_attention(qr, kr, vr, is_causal=True,
                                                  scale=scale).transpose(0, 1))
    torch.testing.assert_close(out, torch.cat(ref), rtol=1e-4, atol=1e-4)
    return {"key_cache": key_cache, "value_cache": value_cache, "out": out}


@check
def fused_moe() -> Dict[str, torch.Tensor]:
    # vLLM's unquantized CPU MoE (weights prepacked for the "vec" ISA), silu gate, top-2 of 4
    # experts, against the loop over experts in torch.
    experts, hidden, inter, tokens, topk = 4, 64, 32, 6, 2
    x = randn((tokens, hidden), seed=17)
    w13 = randn((experts, 2 * inter, hidden), seed=18) * 0.1
    w2 = randn((experts, hidden, inter), seed=19) * 0.1
    g = torch.Generator().manual_seed(20)
    scores = torch.rand(tokens, experts, generator=g)
    topk_weights, topk_ids = scores.topk(topk, dim=-1)
    topk_ids = topk_ids.to(torch.int32)
    p13, p2 = torch.empty_like(w13), torch.empty_like(w2)
    C().prepack_moe_weight(w13, p13, "vec")
    C().prepack_moe_weight(w2, p2, "vec")
    out = torch.empty(tokens, hidden)
    C().cpu_fused_moe(out, x, p13, p2, None, None, topk_weights, topk_ids, False, "silu", "vec")
    ref = torch.zeros(tokens, hidden)
    for t in range(tokens):
        for j in range(topk):
            e = int(topk_ids[t, j])
            gate_up = w13[e] @ x[t]
            h = F.silu(gate_up[:inter]) * gate_up[inter:]
            ref[t] += topk_weights[t, j] * (w2[e] @ h)
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-4)
    return {"out": out, "packed_w13": p13}


def gated_delta_ref(q, k, v, g, beta, state, scale, l2norm, eps):  # noqa: ANN001, ANN201
    """The gated delta rule, token by token, in float: q, k [T, H, K]; v [T, Hv, V];
    g, beta [T, Hv]; state [Hv, K, V] (updated in place). Returns o [T, Hv, V]."""
    q, k, v, g, beta = q.float(), k.float(), v.float(), g.float(), beta.float()
    if l2norm:
        q = q / torch.sqrt(q.pow(2).sum(-1, keepdim=True) + eps)
        k = k / torch.sqrt(k.pow(2).sum(-1, keepdim=True) + eps)
    group = v.shape[1] // q.shape[1]
    out = torch.empty(v.shape)
    for t in range(q.shape[0]):
        for h in range(v.shape[1]):
            qt, kt = q[t, h // group] * scale, k[t, h // group]
            s = state[h] * torch.exp(g[t, h])
            delta = (v[t, h] - s.t() @ kt) * beta[t, h]
            s = s + torch.outer(kt, delta)
            state[h] = s
            out[t, h] = s.t() @ qt
    return out


@check
def fused_gdn_gating() -> Dict[str, torch.Tensor]:
    heads, batch = 8, 3
    a_log, dt_bias = randn((heads,), torch.bfloat16, 21), randn((heads,), torch.bfloat16, 22)
    a, b = randn((batch, heads), torch.bfloat16, 23), randn((batch, heads), torch.bfloat16, 24)
    g, beta = C().fused_gdn_gating_cpu(a_log, a, b, dt_bias)
    g_ref = -a_log.float().exp() * F.softplus(a.float() + dt_bias.float())
    close(g.view(batch, heads), g_ref, torch.float32)
    close(beta.view(batch, heads), torch.sigmoid(b.float()), torch.bfloat16)
    return {"g": g, "beta": beta}


@check
def chunk_gated_delta_rule() -> Dict[str, torch.Tensor]:
    # Two sequences (70 and 30 tokens: across a 64-token chunk) of Qwen3-Next's linear
    # attention, l2-normalised q / k, against the token-by-token rule.
    lens, heads, v_heads, dim = [70, 30], 2, 4, 128
    tokens = sum(lens)
    q = randn((1, tokens, heads, dim), torch.bfloat16, 25)
    k = randn((1, tokens, heads, dim), torch.bfloat16, 26)
    v = randn((1, tokens, v_heads, dim), torch.bfloat16, 27)
    g = -torch.rand(1, tokens, v_heads, generator=torch.Generator().manual_seed(28)) * 0.2
    beta = torch.rand(1, tokens, v_heads, generator=torch.Generator().manual_seed(29)).to(
        torch.bfloat16)
    pool = randn((3, v_heads, dim, dim), seed=30) * 0.1  # [slot, Hv, V, K]
    indices = torch.tensor([2, 0], dtype=torch.int32)
    cu = torch.tensor([0, lens[0], tokens], dtype=torch.int32)
    expected_pool = pool.clone()
    o_ref = []
    for s, (start, end) in enumerate([(0, lens[0]), (lens[0], tokens)]):
        state = expected_pool[int(indices[s])].transpose(1, 2).clone()  # [Hv, K, V]
        o_ref.append(gated_delta_ref(q[0, start:end], k[0, start:end], v[0, start:end],
                                     g[0, start:end], beta[0, start:end], state,
                                     dim ** -0.5, True, 1e-6))
        expected_pool[int(indices[s])] = state.transpose(1, 2)
    o, final = C().chunk_gated_delta_rule_cpu(q, k, v, g, beta, pool, True, cu, False, True,
                                              indices, 1e-6)
    torch.testing.assert_close(o.float().view(tokens, v_heads, dim), torch.cat(o_ref),
                               rtol=5e-2, atol=5e-2)
    return {"o": o, "final": final, "pool": pool}


@check
def fused_sigmoid_gating_delta_rule_update() -> Dict[str, torch.Tensor]:
    # One decode step for three sequences: the gating computed in the kernel from A_log, a,
    # dt_bias (g) and b (beta), the state updated in place in its pool slot.
    batch, heads, v_heads, dim = 3, 2, 4, 32
    q = randn((1, batch, heads, dim), torch.bfloat16, 31)
    k = randn((1, batch, heads, dim), torch.bfloat16, 32)
    v = randn((1, batch, v_heads, dim), torch.bfloat16, 33)
    a_log, dt_bias = randn((v_heads,), torch.bfloat16, 34), randn((v_heads,), torch.bfloat16, 35)
    a, b = randn((batch, v_heads), torch.bfloat16, 36), randn((batch, v_heads), torch.bfloat16, 37)
    pool = randn((4, v_heads, dim, dim), seed=38) * 0.1  # [slot, Hv, K, V]
    indices = torch.tensor([3, 1, 0], dtype=torch.int32)
    cu = torch.arange(batch + 1, dtype=torch.int32)
    g = -a_log.float().exp() * F.softplus(a.float() + dt_bias.float())
    beta = torch.sigmoid(b.float())
    expected_pool = pool.clone()
    o_ref = []
    for s in range(batch):
        state = expected_pool[int(indices[s])]
        o_ref.append(gated_delta_ref(q[0, s:s + 1], k[0, s:s + 1], v[0, s:s + 1], g[s:s + 1],
                                     beta[s:s + 1], state, dim ** -0.5, True, 1e-6))
    o = C().fused_sigmoid_gating_delta_rule_update_cpu(a_log, dt_bias, q, k, v, a, b, pool,
                                                      indices, cu, True)
    torch.testing.assert_close(o.float().reshape(batch, v_heads, dim), torch.cat(o_ref),
                               rtol=5e-2, atol=5e-2)
    torch.testing.assert_close(pool, expected_pool, rtol=5e-2, atol=5e-2)
    return {"o": o, "pool": pool}


@check
def errors_keep_their_kind() -> Dict[str, torch.Tensor]:
    # A failed TORCH_CHECK in a kernel is RuntimeError; the ops this run did not build raise
    # NotImplementedError (the same on both runtimes).
    try:
        C().greedy_argmax(torch.ones(3))
    except RuntimeError as e:
        runtime_error = str(e).splitlines()[0]
    else:
        raise AssertionError("greedy_argmax of a 1-D tensor did not raise")
    try:
        C().is_onednn_acl_supported()
    except NotImplementedError as e:
        assert "not built in this run" in str(e), e
    else:
        raise AssertionError("is_onednn_acl_supported did not raise NotImplementedError")
    return {"message": torch.tensor(list(runtime_error.encode()), dtype=torch.uint8)}


def run(runtime: str, library: str, out_path: str) -> int:
    if runtime == "torch":
        torch.ops.load_library(library)
    else:
        import opreg
        import opreg.torch  # noqa: F401 - opreg ops become torch ops

        opreg.load_library(library)
        opreg.torch.sync()
    results, outputs = {}, {}
    for fn in CHECKS:
        try:
            outputs[fn.__name__] = fn()
            results[fn.__name__] = "pass"
        except Exception as e:  # noqa: BLE001 - each check's failure is reported, not raised
            results[fn.__name__] = f"fail: {type(e).__name__}: {str(e).splitlines()[0][:300]}"
            traceback.print_exc()
        print(f"{fn.__name__}: {results[fn.__name__]}")
    torch.save({"results": results, "outputs": outputs}, out_path)
    print(json.dumps({"runtime": runtime, "checks": len(results),
                      "passed": sum(r == "pass" for r in results.values())}))
    return 0 if all(r == "pass" for r in results.values()) else 1


def _strip_op_name(message: str) -> str:
    # opreg puts "[ns::op] " in front of a kernel's message; libtorch does not.
    return message.split("] ", 1)[1] if message.startswith("[") and "] " in message else message


def compare(a_path: str, b_path: str) -> int:
    a, b = torch.load(a_path), torch.load(b_path)
    same = {}
    for name in a["outputs"].keys() | b["outputs"].keys():
        oa, ob = a["outputs"].get(name), b["outputs"].get(name)
        if oa is None or ob is None or oa.keys() != ob.keys():
            same[name] = False
            continue
        ok = True
        for key in oa:
            x, y = oa[key], ob[key]
            if name == "errors_keep_their_kind":
                x = _strip_op_name(bytes(x.tolist()).decode())
                y = _strip_op_name(bytes(y.tolist()).decode())
                ok &= x == y
            else:
                ok &= x.dtype == y.dtype and x.shape == y.shape and torch.equal(
                    x.view(torch.uint8) if x.dtype.is_floating_point else x,
                    y.view(torch.uint8) if y.dtype.is_floating_point else y)
        same[name] = ok
    for name in sorted(same):
        print(f"{name}: {'bit-identical' if same[name] else 'DIFFERENT'}")
    print(json.dumps({"compared": len(same), "identical": sum(same.values())}))
    return 0 if all(same.values()) else 1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", choices=("torch", "opreg"))
    parser.add_argument("--library")
    parser.add_argument("--out")
    parser.add_argument("--compare", nargs=2)
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    return run(args.runtime, args.library, args.out)


if __name__ == "__main__":
    sys.exit(main())
