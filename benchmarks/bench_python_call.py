#!/usr/bin/env python3
"""Per-call overhead of calling an op from Python.

No-op ops with 1 and 3 tensor arguments, all in the same run:
- `opreg.ops` (C++ no-op kernel) with opreg.Tensor, NumPy and torch arguments, and a Python
  no-op kernel registered with opreg.Library; a plain Python function call for scale;
- when torch is installed: the same C++ op as `torch.ops._opreg_test.*` through opreg.torch;
  a native libtorch `TORCH_LIBRARY` C++ no-op op and the same op written against torch's stable
  ABI (`STABLE_TORCH_LIBRARY`, the only way one compiled wheel serves several torch versions),
  both built here with torch.utils.cpp_extension (a minute or two; `--no-native` skips them);
  `torch.ops` on ops defined with torch.library
  (define + impl, Python kernel) and torch.library.custom_op; torch.ops.aten.add;
- when apache-tvm-ffi is installed (PyPI): its C++ no-op function `testing.nop` with torch
  and NumPy arguments.

With torch and the native ops, two more sections: an op with a return (`mul`) in its
functional, out and in-place forms against the native op, in grad mode, no_grad and
inference_mode; and a `-> ()` op in vLLM's argument style (a tensor, a `str`, an `int[]` of 4)
through opreg.torch, as a native TORCH_LIBRARY op and as a STABLE_TORCH_LIBRARY op.

With `--device cuda` every tensor is a CUDA tensor (opreg.Tensor rows hold torch's CUDA memory;
the NumPy rows are left out): the same calls, plus the stream lookup a CUDA call makes.

    python benchmarks/bench_python_call.py [--device cpu|cuda] [--iters N] [--repeats R]
        [--no-native] [--json PATH]

Figures are nanoseconds per call: the best of R rounds (`--repeats`, default 5) of N calls, every
row timed once per round, so a burst of noise on a shared machine shorter than a round costs each
row at most one round. The two rows of each compared pair are timed back to back in every round,
in turns first. The JSON also has each round's time, and a "net" figure with the cost of calling
an empty Python function in the same loop subtracted. The targets section gives each compared
pair's ratio: of their best rounds, and the median of the per-round ratios.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import opreg


def _loop_ns(call: Callable[..., Any], args: tuple, iters: int) -> int:
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        call(*args)
    return time.perf_counter_ns() - t0


def _empty(*_: Any) -> None:
    pass


def measure_rounds(calls: List[tuple], groups: List[List[int]], iters: int,
                   repeats: int) -> List[Dict[str, List[int]]]:
    """Times every (call, args) of `calls` once per round, `repeats` rounds.

    `groups` lists every index of `calls` once; a group's calls are timed back to back, first to
    last in even rounds and last to first in odd ones (a compared pair: neither always goes
    first). Each call is followed by an empty Python function called in the same loop with the
    same arguments (the "net" figure's baseline). Returns, per call, its times in round order.
    """
    for call, a in calls:
        _loop_ns(call, a, max(iters // 10, 100))  # warm up
    out: List[Dict[str, List[int]]] = [{"op": [], "empty": []} for _ in calls]
    for r in range(repeats):
        for group in groups:
            for i in (group if r % 2 == 0 else reversed(group)):
                call, a = calls[i]
                out[i]["op"].append(_loop_ns(call, a, iters))
                out[i]["empty"].append(_loop_ns(_empty, a, iters))
    return out


def timing_groups(pairs: List[List[Optional[int]]], n: int) -> List[List[int]]:
    """measure_rounds' groups for calls 0..n-1: the compared pairs (None for a row the run
    lacks: that pair is dropped), pairs that share a call merged into one group so that every
    call is timed once per round, then every other call alone."""
    groups: List[List[int]] = []
    for pair in pairs:
        if None in pair:
            continue
        touching = [g for g in groups if set(g) & set(pair)]
        merged = [k for g in touching for k in g]
        merged += [k for k in pair if k not in merged]
        groups = [g for g in groups if g not in touching] + [merged]
    grouped = {k for g in groups for k in g}
    return groups + [[k] for k in range(n) if k not in grouped]


def compare(rounds: Dict[tuple, List[int]], label: str, num: str, den: str,
            target: Optional[float]) -> Optional[Dict[str, Any]]:
    """The ratio of row `num` to row `den` from their per-round times (`rounds[(row, arity)]`):
    of their best rounds, and the median of the per-round ratios, for each arity both rows have.
    None when they share no arity. `target` None: a pair shown for scale."""
    entry: Dict[str, Any] = {"comparison": label, "target_at_most": target}
    for arity in (1, 3):
        n, d = rounds.get((num, arity)), rounds.get((den, arity))
        if n is None or d is None:
            continue
        entry[f"best_ratio_{arity}"] = min(n) / min(d)
        entry[f"median_ratio_{arity}"] = statistics.median(a / b for a, b in zip(n, d))
    return entry if len(entry) > 2 else None


def format_comparison(c: Dict[str, Any], width: int) -> str:
    """One line of the targets section ("-" for an arity the pair lacks)."""
    if "best_ratio_2" in c:  # a functional-op pair: 2 tensors
        return (f"{c['comparison']:<{width}}  2 tensors {c['best_ratio_2']:.3f} "
                f"({c['median_ratio_2']:.3f})  target <= {c['target_at_most']:.2f}")
    cells = [f"{c[f'best_ratio_{a}']:.3f} ({c[f'median_ratio_{a}']:.3f})"
             if f"best_ratio_{a}" in c else "-" for a in (1, 3)]
    return (f"{c['comparison']:<{width}}  1 tensor {cells[0]:>15}  3 tensors {cells[1]:>15}"
            + (f"  target <= {c['target_at_most']:.2f}" if c["target_at_most"] is not None
               else "  (for scale)"))


_NATIVE_SOURCE = r"""
#include <torch/library.h>

namespace {
void noop1(const at::Tensor&) {}
void noop3(const at::Tensor&, const at::Tensor&, const at::Tensor&) {}
// vLLM's argument style: a tensor, a name (kv-cache dtype) and sizes.
void noop_args(const at::Tensor&, c10::string_view, at::IntArrayRef) {}
// A functional op with a return, no autograd kernel: what a libtorch library's `mul` is.
at::Tensor mul(const at::Tensor& a, const at::Tensor& b) { return a * b; }
// Its out form, as libtorch's `mul.out`.
at::Tensor& mul_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  return at::mul_out(out, a, b);
}
// Its in-place form, as libtorch's `mul_`.
at::Tensor& mul_(at::Tensor& self, const at::Tensor& other) { return self.mul_(other); }
// An op with a Scalar argument (which torch's stable ABI cannot carry), as libtorch's `add`.
at::Tensor add(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha) {
  return at::add(a, b, alpha);
}
at::Tensor& add_out(const at::Tensor& a, const at::Tensor& b, const at::Scalar& alpha,
                    at::Tensor& out) {
  return at::add_out(out, a, b, alpha);
}
}  // namespace

TORCH_LIBRARY(bench_native, m) {
  m.def("noop1(Tensor a) -> ()");
  m.def("noop3(Tensor a, Tensor b, Tensor c) -> ()");
  m.def("noop_args(Tensor a, str tag, int[] dims) -> ()");
  m.def("mul(Tensor a, Tensor b) -> Tensor");
  m.def("mul.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)");
  m.def("mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)");
  m.def("add(Tensor a, Tensor b, *, Scalar alpha=1) -> Tensor");
  m.def("add.out(Tensor a, Tensor b, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
}

TORCH_LIBRARY_IMPL(bench_native, CPU, m) {
  m.impl("noop1", &noop1);
  m.impl("noop3", &noop3);
  m.impl("noop_args", &noop_args);
  m.impl("mul", &mul);
  m.impl("mul.out", &mul_out);
  m.impl("mul_", &mul_);
  m.impl("add", &add);
  m.impl("add.out", &add_out);
}

TORCH_LIBRARY_IMPL(bench_native, CUDA, m) {
  m.impl("noop1", &noop1);
  m.impl("noop3", &noop3);
  m.impl("noop_args", &noop_args);
  m.impl("mul", &mul);
  m.impl("mul.out", &mul_out);
  m.impl("mul_", &mul_);
  m.impl("add", &add);
  m.impl("add.out", &add_out);
}
"""


# The same no-op ops against torch's stable ABI: what a kernel library shipping one binary for
# several torch versions writes, and what opreg.torch's bridge is built on (each tensor argument
# crosses as a heap-allocated handle read through the shim's C functions).
_STABLE_SOURCE = r"""
#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

#include <string>
#include <vector>

namespace {
void noop1(torch::stable::Tensor) {}
void noop3(torch::stable::Tensor, torch::stable::Tensor, torch::stable::Tensor) {}
void noop_args(torch::stable::Tensor, std::string, std::vector<int64_t>) {}
}  // namespace

STABLE_TORCH_LIBRARY(bench_stable, m) {
  m.def("noop1(Tensor a) -> ()");
  m.def("noop3(Tensor a, Tensor b, Tensor c) -> ()");
  m.def("noop_args(Tensor a, str tag, int[] dims) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(bench_stable, CPU, m) {
  m.impl("noop1", TORCH_BOX(&noop1));
  m.impl("noop3", TORCH_BOX(&noop3));
  m.impl("noop_args", TORCH_BOX(&noop_args));
}

STABLE_TORCH_LIBRARY_IMPL(bench_stable, CUDA, m) {
  m.impl("noop1", TORCH_BOX(&noop1));
  m.impl("noop3", TORCH_BOX(&noop3));
  m.impl("noop_args", TORCH_BOX(&noop_args));
}
"""


def _built_torch_ops(name: str, namespace: str, source: str, what: str) -> Any:
    """torch.ops.<namespace>: the no-op ops of `source`, built with cpp_extension and loaded."""
    import torch
    from torch.utils.cpp_extension import load_inline

    print(f"building the {what} op with torch.utils.cpp_extension ...", flush=True)
    load_inline(name=name, cpp_sources=[source], is_python_module=False, extra_cflags=["-O2"],
                verbose=False)
    return getattr(torch.ops, namespace)


def _native_torch_ops() -> Any:
    """torch.ops.bench_native: no-op ops written against libtorch."""
    return _built_torch_ops("opreg_bench_native", "bench_native", _NATIVE_SOURCE,
                            "native TORCH_LIBRARY")


def _stable_torch_ops() -> Optional[Any]:
    """torch.ops.bench_stable: the no-op ops written against torch's stable ABI; None (with the
    reason printed) on a torch whose stable headers lack what they use."""
    try:
        return _built_torch_ops("opreg_bench_stable", "bench_stable", _STABLE_SOURCE,
                                "STABLE_TORCH_LIBRARY")
    except Exception as e:  # a compile error: this torch's stable ABI is older
        print(f"skipping the STABLE_TORCH_LIBRARY row: it does not build with this torch "
              f"({str(e).splitlines()[0] if str(e) else type(e).__name__})", flush=True)
        return None


# The targets of docs/design.md's performance contracts: (comparison, row, row it is held
# against, highest ratio aimed for).
_COMPARISONS = [
    ("opreg.ops / apache-tvm-ffi, torch args", "opreg.ops, C++ kernel (torch args)",
     "apache-tvm-ffi C++ function (torch args)", 1.0),
    ("opreg.ops / apache-tvm-ffi, NumPy args", "opreg.ops, C++ kernel (NumPy args)",
     "apache-tvm-ffi C++ function (NumPy args)", 1.0),
    ("torch.ops via opreg.torch / native TORCH_LIBRARY op",
     "torch.ops through opreg.torch (opreg C++ kernel)",
     "torch.ops, native TORCH_LIBRARY C++ op (cpp_extension)", 1.2),
    # For scale, no target: how far the bridge is from the cheapest op one binary can register
    # in every torch (the stable ABI's own no-op).
    ("torch.ops via opreg.torch / native STABLE_TORCH_LIBRARY op",
     "torch.ops through opreg.torch (opreg C++ kernel)",
     "torch.ops, native STABLE_TORCH_LIBRARY C++ op (cpp_extension)", None),
    ("native STABLE_TORCH_LIBRARY op / native TORCH_LIBRARY op",
     "torch.ops, native STABLE_TORCH_LIBRARY C++ op (cpp_extension)",
     "torch.ops, native TORCH_LIBRARY C++ op (cpp_extension)", None),
]


def measure_list_and_str_args(native: Any, stable: Optional[Any], tx: Any, iters: int,
                              repeats: int) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """A `-> ()` op with vLLM's argument style, `noop_args(Tensor a, str tag, int[] dims)`
    called with ("auto", [16, 32, 64, 128]): through opreg.torch (the bridge converts the string
    and the list through torch's stable ABI), as a native TORCH_LIBRARY op and as a
    STABLE_TORCH_LIBRARY op, timed together. Rows carry `ns_args`; the comparisons are for
    scale (no target)."""
    import torch

    call_args = (tx, "auto", [16, 32, 64, 128])
    ops = [("torch.ops._opreg_test.noop_args via opreg.torch", torch.ops._opreg_test.noop_args),
           ("torch.ops, native TORCH_LIBRARY noop_args", native.noop_args)]
    if stable is not None:
        ops.append(("torch.ops, native STABLE_TORCH_LIBRARY noop_args", stable.noop_args))
    t = measure_rounds([(op, call_args) for _, op in ops], [list(range(len(ops)))], iters,
                       repeats)
    rows = [{"case": name, "ns_args": min(times["op"]) / iters,
             "rounds_ns_args": [v / iters for v in times["op"]]}
            for (name, _), times in zip(ops, t)]
    comparisons = []
    for i, peer in ((1, "native TORCH_LIBRARY op"), (2, "native STABLE_TORCH_LIBRARY op")):
        if i < len(ops):
            comparisons.append({
                "comparison": f"str + int[] args op via opreg.torch / {peer}",
                "target_at_most": None,
                "best_ratio_1": min(t[0]["op"]) / min(t[i]["op"]),
                "median_ratio_1": statistics.median(a / b for a, b in zip(t[0]["op"],
                                                                          t[i]["op"]))})
    return rows, comparisons


def measure_functional(native: Any, tx: Any, ty: Any, iters: int,
                       repeats: int) -> Tuple[List[Dict[str, Any]], List[Dict[str, Any]]]:
    """An op with a return through torch.ops, in its functional form (`mul(a, b) -> Tensor`),
    its out form (`mul.out(a, b, *, out) -> Tensor(a!)`) and its in-place form
    (`mul_(Tensor(a!) self, other) -> Tensor(a!)`), two 4-element tensors: opreg's built-in mul
    (the in-place form: `_opreg_test::mul_`, a C++ kernel from opreg._C's test library) through
    opreg.torch against the same op as a native TORCH_LIBRARY op (libtorch's `a * b`,
    `at::mul_out` and `Tensor::mul_`), timed as a pair in grad mode, under torch.no_grad() and
    under torch.inference_mode() (the mode entered once around each measurement). Rows carry the
    time in `ns_2_tensors`; comparisons name the form and mode."""
    import torch

    out = torch.empty_like(tx)
    ones, factor = torch.ones_like(tx), torch.ones_like(tx)  # ones: the in-place form keeps them
    forms = (("functional", "torch.ops.opreg.mul", torch.ops.opreg.mul.default,
              native.mul.default, (tx, ty)),
             ("out form", "torch.ops.opreg.mul",
              lambda a, b: torch.ops.opreg.mul.out(a, b, out=out),
              lambda a, b: native.mul.out(a, b, out=out), (tx, ty)),
             ("in-place form", "torch.ops._opreg_test.mul_", torch.ops._opreg_test.mul_.default,
              native.mul_.default, (ones, factor)),
             ("functional form, Scalar alpha", "torch.ops.opreg.add", torch.ops.opreg.add.default,
              native.add.default, (tx, ty)),
             ("out form, Scalar alpha", "torch.ops.opreg.add",
              lambda a, b: torch.ops.opreg.add.out(a, b, out=out),
              lambda a, b: native.add.out(a, b, out=out), (tx, ty)))
    rows: List[Dict[str, Any]] = []
    comparisons: List[Dict[str, Any]] = []
    for form, label, ours, theirs, call_args in forms:
        for mode, enter in (("grad mode", torch.enable_grad), ("torch.no_grad", torch.no_grad),
                            ("torch.inference_mode", torch.inference_mode)):
            with enter():
                t = measure_rounds([(ours, call_args), (theirs, call_args)], [[0, 1]], iters,
                                   repeats)
            names = (f"{label} via opreg.torch, {form} ({mode})",
                     f"torch.ops, native TORCH_LIBRARY {label.rsplit('.', 1)[1]}, {form} ({mode})")
            for name, times in zip(names, t):
                rows.append({"case": name, "ns_2_tensors": min(times["op"]) / iters,
                             "rounds_ns_2_tensors": [v / iters for v in times["op"]]})
            comparisons.append({
                "comparison": f"{form} op with a return / native TORCH_LIBRARY op ({mode})",
                "target_at_most": 1.3,
                "best_ratio_2": min(t[0]["op"]) / min(t[1]["op"]),
                "median_ratio_2": statistics.median(a / b for a, b in zip(t[0]["op"],
                                                                          t[1]["op"]))})
    return rows, comparisons


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--no-native", action="store_true",
                   help="skip the native TORCH_LIBRARY op (no C++ compile)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where the tensors live (cuda needs torch with a CUDA device)")
    args = p.parse_args(argv)
    if args.iters < 1 or args.repeats < 1:
        p.error(f"--iters and --repeats must be at least 1 (got {args.iters} and {args.repeats})")
    cuda = args.device == "cuda"
    key = "CUDA" if cuda else "CPU"
    if cuda:
        try:
            import torch
        except ImportError:
            print("--device cuda needs torch (pip install torch)", file=sys.stderr)
            return 2
        if not torch.cuda.is_available() or not opreg.cuda.is_available():
            print("--device cuda: torch or opreg sees no CUDA device (torch.cuda.is_available() "
                  f"{torch.cuda.is_available()}, opreg.cuda.is_available() "
                  f"{opreg.cuda.is_available()})", file=sys.stderr)
            return 2

    opreg._C._load_test_ops()
    lib = opreg.Library("bench_py", "FRAGMENT")
    lib.define("noop1(Tensor a) -> ()")
    lib.define("noop3(Tensor a, Tensor b, Tensor c) -> ()")
    lib.impl("noop1", lambda a: None, key)
    lib.impl("noop3", lambda a, b, c: None, key)

    # Three distinct objects for the 3-tensor calls: one object passed three times lets a runtime
    # reuse the first conversion (opreg does, within a call), which real calls rarely allow.
    if cuda:
        x, y, z = (opreg.from_dlpack(torch.zeros(4, device="cuda")) for _ in range(3))
    else:
        x, y, z = (opreg.zeros((4,)) for _ in range(3))
    xn, yn, zn = (np.zeros(4, np.float32) for _ in range(3))

    def py1(a: Any) -> None:
        pass

    def py3(a: Any, b: Any, c: Any) -> None:
        pass

    cases: List[tuple] = [
        ("python function call", py1, (x,), py3, (x, y, z)),
        ("opreg.ops, C++ kernel (opreg.Tensor args)", opreg.ops._opreg_test.noop1, (x,),
         opreg.ops._opreg_test.noop3, (x, y, z)),
        ("opreg.ops, C++ kernel, .default overload", opreg.ops._opreg_test.noop1.default, (x,),
         opreg.ops._opreg_test.noop3.default, (x, y, z)),
        ("opreg.ops, Python kernel (opreg.Library)", opreg.ops.bench_py.noop1, (x,),
         opreg.ops.bench_py.noop3, (x, y, z)),
    ]
    if not cuda:
        cases.insert(3, ("opreg.ops, C++ kernel (NumPy args)", opreg.ops._opreg_test.noop1, (xn,),
                         opreg.ops._opreg_test.noop3, (xn, yn, zn)))
    torch_version = None
    bridge = None  # the bridge torch.ops calls opreg through (opreg.torch._kernels.BRIDGE)
    try:
        import torch

        torch_version = torch.__version__
        from opreg.torch import _kernels as torch_kernels

        bridge = torch_kernels.BRIDGE or "python kernels"
        tlib = torch.library.Library("bench_torch", "FRAGMENT")
        tlib.define("noop1(Tensor a) -> ()")
        tlib.define("noop3(Tensor a, Tensor b, Tensor c) -> ()")
        tlib.impl("noop1", lambda a: None, key)
        tlib.impl("noop3", lambda a, b, c: None, key)

        # Explicit schemas: this file's annotations are strings (from __future__ import
        # annotations).
        @torch.library.custom_op("bench_torch_co::noop1", mutates_args=(),
                                 schema="(Tensor a) -> ()")
        def co1(a):
            pass

        @torch.library.custom_op("bench_torch_co::noop3", mutates_args=(),
                                 schema="(Tensor a, Tensor b, Tensor c) -> ()")
        def co3(a, b, c):
            pass

        tx, ty, tz = (torch.zeros(4, device=args.device) for _ in range(3))
        import opreg.torch as opreg_torch

        opreg_torch.sync()  # the test ops were loaded after opreg.torch could have been imported
        cases += [
            ("opreg.ops, C++ kernel (torch args)", opreg.ops._opreg_test.noop1, (tx,),
             opreg.ops._opreg_test.noop3, (tx, ty, tz)),
            ("torch.ops through opreg.torch (opreg C++ kernel)", torch.ops._opreg_test.noop1, (tx,),
             torch.ops._opreg_test.noop3, (tx, ty, tz)),
        ]
        if not args.no_native:
            native = _native_torch_ops()
            cases.append(("torch.ops, native TORCH_LIBRARY C++ op (cpp_extension)", native.noop1,
                          (tx,), native.noop3, (tx, ty, tz)))
            stable = _stable_torch_ops()
            if stable is not None:
                cases.append(("torch.ops, native STABLE_TORCH_LIBRARY C++ op (cpp_extension)",
                              stable.noop1, (tx,), stable.noop3, (tx, ty, tz)))
        cases += [
            ("torch.ops, torch.library define+impl (Python kernel)", torch.ops.bench_torch.noop1,
             (tx,), torch.ops.bench_torch.noop3, (tx, ty, tz)),
            ("torch.ops, torch.library.custom_op", torch.ops.bench_torch_co.noop1, (tx,),
             torch.ops.bench_torch_co.noop3, (tx, ty, tz)),
            ("torch.ops.aten.add (C++ kernel, for scale)", torch.ops.aten.add.Tensor, (tx, tx),
             None, None),
        ]
    except ImportError:
        pass
    tvm_ffi_version = None
    try:
        import tvm_ffi

        tvm_ffi_version = getattr(tvm_ffi, "__version__", "installed")
        nop = tvm_ffi.get_global_func("testing.nop")
        if not cuda:
            cases.append(("apache-tvm-ffi C++ function (NumPy args)", nop, (xn,), nop,
                          (xn, yn, zn)))
        if torch_version is not None:
            cases.append(("apache-tvm-ffi C++ function (torch args)", nop, (tx,), nop,
                          (tx, ty, tz)))
    except ImportError:
        pass

    flat: List[tuple] = []  # (row, arity, call, args)
    for i, (_, f1, a1, f3, a3) in enumerate(cases):
        flat.append((i, 1, f1, a1))
        if f3 is not None:
            flat.append((i, 3, f3, a3))
    # Timing order: each compared pair back to back (per arity), the other rows alone.
    where = {(cases[i][0], arity): k for k, (i, arity, _, _) in enumerate(flat)}
    groups = timing_groups([[where.get((num, arity)), where.get((den, arity))]
                            for _, num, den, _ in _COMPARISONS for arity in (1, 3)], len(flat))
    timed = measure_rounds([(f, a) for _, _, f, a in flat], groups, args.iters, args.repeats)
    rows = [{"case": c[0]} for c in cases]
    rounds: Dict[tuple, List[int]] = {}  # (case, arity) -> the op's time in each round
    for (i, arity, _, _), t in zip(flat, timed):
        suffix = "1_tensor" if arity == 1 else "3_tensors"
        rows[i][f"ns_{suffix}"] = min(t["op"]) / args.iters
        rows[i][f"net_ns_{suffix}"] = (min(t["op"]) - min(t["empty"])) / args.iters
        rows[i][f"rounds_ns_{suffix}"] = [v / args.iters for v in t["op"]]
        rounds[(cases[i][0], arity)] = t["op"]
    comparisons = [c for c in (compare(rounds, *spec) for spec in _COMPARISONS) if c is not None]
    if torch_version is not None and not args.no_native:
        functional_rows, functional_comparisons = measure_functional(
            _native_torch_ops(), tx, ty, args.iters, args.repeats)
        rows += functional_rows
        comparisons += functional_comparisons
        args_rows, args_comparisons = measure_list_and_str_args(
            _native_torch_ops(), _stable_torch_ops(), tx, args.iters, args.repeats)
        rows += args_rows
        comparisons += args_comparisons

    w = max(len(r["case"]) for r in rows)
    print(f"per-call time, ns (best of {args.repeats} rounds of {args.iters} calls, every row "
          f"timed once per round; {args.device} tensors); python {platform.python_version()}, "
          f"opreg {opreg.__version__}, torch {torch_version or 'not installed'} "
          f"(opreg.torch bridge: {bridge}), "
          f"apache-tvm-ffi {tvm_ffi_version or 'not installed'}")
    print(f"{'case':<{w}}  {'1 tensor':>9}  {'3 tensors':>9}")
    for r in rows:
        if "ns_2_tensors" in r or "ns_args" in r:
            continue
        three = f"{r['ns_3_tensors']:9.0f}" if "ns_3_tensors" in r else f"{'-':>9}"
        print(f"{r['case']:<{w}}  {r['ns_1_tensor']:9.0f}  {three}")
    for key, title in (("ns_2_tensors", "an op with a return, functional, out and in-place "
                                        "forms, 2 tensors (mul of 4 elements), ns per call"),
                       ("ns_args", "a -> () op with a tensor, a str and an int[] of 4 (vLLM's "
                                   "argument style), ns per call")):
        section = [r for r in rows if key in r]
        if section:
            print(f"\n{title}")
            for r in section:
                print(f"{r['case']:<{w}}  {r[key]:9.0f}")
    if comparisons:
        print("\ntargets: ratio of the best rounds (median of the per-round ratios)")
        w = max(len(c["comparison"]) for c in comparisons)
        for c in comparisons:
            print(format_comparison(c, w))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": platform.python_version(), "opreg": opreg.__version__,
                       "torch": torch_version, "opreg_torch_bridge": bridge,
                       "tvm_ffi": tvm_ffi_version,
                       "machine": platform.machine(), "device": args.device,
                       "iters": args.iters, "repeats": args.repeats, "results": rows,
                       "comparisons": comparisons}, f, indent=2)
    lib._destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
