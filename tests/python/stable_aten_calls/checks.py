"""Runs the ops of the stable_aten_calls test library (each one call of a torch::stable aten
function) on many inputs and compares every result with torch's own op on the same inputs.
Run as a script in a fresh process, on either runtime:

    python checks.py --runtime torch --library build-torch/libstable_aten_calls.so
    python checks.py --runtime opreg --library build-opreg/libstable_aten_calls.so

Prints one JSON line: the number of cases, each mismatch (case, what differed) and a digest of
every result, for the caller to compare across runtimes. Integer results, sorts, index_select,
amax, subtract and floor_divide must equal torch's bit for bit; floating matmul is compared
with a tolerance (torch's BLAS accumulates in the input precision). Errors must be raised where
torch raises (their types are recorded in the digests, so that the runtimes are compared).
"""
from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Callable, Dict, List, Tuple

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from stable_runtime import parse_check_args  # noqa: E402 - tests/python, beside this directory

MISMATCHES: List[str] = []
DIGESTS: Dict[str, str] = {}
CASES = 0

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]


def ops():  # noqa: ANN201 - torch's namespace object
    return torch.ops.stable_aten_calls


def sample(shape: Tuple[int, ...], dtype: torch.dtype, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        x = torch.randn(shape, generator=g) * 4
        if x.numel() > 3:
            x.view(-1)[1] = float("nan")
            x.view(-1)[2] = x.view(-1)[0]  # a tie
        return x.to(dtype)
    lo, hi = (0, 256) if dtype == torch.uint8 else (-100, 100)
    return torch.randint(lo, hi, shape, generator=g).to(dtype)


def canonical(t: torch.Tensor) -> torch.Tensor:
    """t with every NaN replaced by one NaN: a NaN's sign and payload are not part of a
    result (torch passes an input NaN's bits through, a computation in double makes new ones)."""
    t = t.contiguous().reshape(-1)
    if t.dtype.is_floating_point:
        t = torch.where(torch.isnan(t), torch.full_like(t, float("nan")), t)
    return t


def same(a: torch.Tensor, b: torch.Tensor, tolerance: bool = False) -> bool:
    """Same dtype, shape and bits (NaNs equal to NaNs), or close with `tolerance`."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if tolerance and a.dtype.is_floating_point:
        return torch.allclose(a.double(), b.double(), rtol=2e-2, atol=1e-2, equal_nan=True)
    return bool(torch.equal(canonical(a).view(torch.uint8), canonical(b).view(torch.uint8)))


def compare(name: str, ours: Callable[[], object], theirs: Callable[[], object],
            tolerance: bool = False) -> None:
    """Runs both; records a mismatch when results differ or only one raises. The exception's
    type is recorded, not compared with torch's: the stable ABI carries no error kind across
    its C boundary (torch's own runtime turns an IndexError into RuntimeError there too)."""
    global CASES
    CASES += 1
    try:
        want = theirs()
    except Exception as e:  # noqa: BLE001 - any exception of torch's is the expectation
        try:
            ours()
        except Exception as mine:  # noqa: BLE001
            DIGESTS[name] = f"raised {type(mine).__name__}"
            return
        MISMATCHES.append(f"{name}: torch raised {type(e).__name__} ({e}), we did not")
        return
    try:
        got = ours()
    except Exception as e:  # noqa: BLE001
        MISMATCHES.append(f"{name}: raised {type(e).__name__}: {e}")
        return
    got_list = list(got) if isinstance(got, (tuple, list)) else [got]
    want_list = list(want) if isinstance(want, (tuple, list)) else [want]
    for k, (g, w) in enumerate(zip(got_list, want_list)):
        if not same(g, w, tolerance):
            MISMATCHES.append(f"{name}[{k}]: got {g.dtype} {tuple(g.shape)} {g.flatten()[:8]}, "
                              f"torch {w.dtype} {tuple(w.shape)} {w.flatten()[:8]}")
    h = hashlib.sha256()
    for g in got_list:
        h.update(canonical(g).view(torch.uint8).numpy().tobytes())
    DIGESTS[name] = h.hexdigest()[:16]


def check_amax() -> None:
    for dtype in FLOATS + INTS:
        x = sample((3, 4, 5), dtype, 1)
        for dim in (0, 1, -1):
            for keepdim in (False, True):
                compare(f"amax_dim {dtype} {dim} {keepdim}",
                        lambda: ops().amax_dim(x, dim, keepdim),
                        lambda: torch.amax(x, dim, keepdim))
        for d0, d1 in ((0, 2), (-1, 1)):
            compare(f"amax_dims {dtype} {d0} {d1}", lambda: ops().amax_dims(x, d0, d1, True),
                    lambda: torch.amax(x, (d0, d1), True))
    empty = torch.empty(2, 0)
    compare("amax_dim empty", lambda: ops().amax_dim(empty, 1, False),
            lambda: torch.amax(empty, 1))


def check_subtract() -> None:
    pairs = [(a, a) for a in FLOATS + INTS] + [
        (torch.uint8, torch.int8), (torch.int32, torch.float32), (torch.float16, torch.bfloat16),
        (torch.int64, torch.float16), (torch.bool, torch.int32)]
    for a_dtype, b_dtype in pairs:
        a = sample((4, 5), a_dtype, 2) if a_dtype != torch.bool else torch.ones(4, 5, dtype=torch.bool)
        b = sample((5,), b_dtype, 3)  # broadcast
        for alpha in (1.0, 3.0):
            compare(f"subtract {a_dtype} {b_dtype} {alpha}",
                    lambda: ops().subtract(a, b, alpha),
                    lambda: torch.sub(a, b, alpha=alpha))


def check_binary() -> None:
    names = ["matmul", "bitwise_and", "bitwise_or", "bitwise_left_shift", "bitwise_right_shift",
             "floor_divide"]
    for which, name in enumerate(names):
        reference = getattr(torch, name)
        for dtype in (FLOATS + INTS if name in ("matmul", "floor_divide") else INTS + [torch.bool]):
            if name == "matmul":
                shapes = [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 2)), ((2, 1, 2, 3), (3, 3, 2))]
            else:
                shapes = [((4, 5), (5,)), ((3, 1), (1, 4))]
            for k, (sa, sb) in enumerate(shapes):
                a, b = sample(sa, dtype, 10 + k), sample(sb, dtype, 20 + k)
                if name.startswith("bitwise_") and "shift" in name:
                    b = (b.to(torch.int64) % 12).to(dtype) if dtype != torch.bool else b
                if name == "floor_divide" and not dtype.is_floating_point:
                    b = torch.where(b == 0, torch.ones_like(b), b)
                compare(f"{name} {dtype} {sa} {sb}", lambda: ops().binary(a, b, which),
                        lambda: reference(a, b),
                        tolerance=name == "matmul")
    zero = torch.tensor([1, 0])
    compare("floor_divide by zero", lambda: ops().binary(zero, zero, 5),
            lambda: torch.floor_divide(zero, zero))
    compare("matmul shapes", lambda: ops().binary(torch.ones(2, 3), torch.ones(2, 3), 0),
            lambda: torch.matmul(torch.ones(2, 3), torch.ones(2, 3)))


def check_index_select() -> None:
    for dtype in FLOATS + INTS + [torch.bool]:
        x = sample((4, 5, 3), dtype if dtype != torch.bool else torch.float32, 4)
        if dtype == torch.bool:
            x = x > 0
        for dim in (0, 1, -1):
            for index_dtype in (torch.int64, torch.int32):
                index = torch.tensor([2, 0, 2, 1], dtype=index_dtype)
                compare(f"index_select {dtype} {dim} {index_dtype}",
                        lambda: ops().index_select(x, dim, index),
                        lambda: torch.index_select(x, dim, index))
    x = torch.arange(4.)
    compare("index_select out of range", lambda: ops().index_select(x, 0, torch.tensor([4])),
            lambda: torch.index_select(x, 0, torch.tensor([4])))


def check_sort() -> None:
    for dtype in FLOATS + INTS:
        x = sample((3, 6), dtype, 5)
        for dim in (0, -1):
            for descending in (False, True):
                # Stable sorts must agree exactly (ties included); the plain sort's values too.
                compare(f"sort_stable {dtype} {dim} {descending}",
                        lambda: ops().sort_stable(x, dim, descending),
                        lambda: torch.sort(x, stable=True, dim=dim, descending=descending))
                compare(f"sort {dtype} {dim} {descending}",
                        lambda: ops().sort(x, dim, descending)[0],
                        lambda: torch.sort(x, dim=dim, descending=descending)[0])


def main() -> int:
    args = parse_check_args()
    for check in (check_amax, check_subtract, check_binary, check_index_select, check_sort):
        check()
    print(json.dumps({"runtime": args.runtime, "cases": CASES, "mismatches": MISMATCHES,
                      "digests": DIGESTS}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
