#!/usr/bin/env python3
"""Per-call overhead of calling an op from Python.

No-op ops with 1 and 3 tensor arguments, called through `opreg.ops` (C++ no-op kernel, and a
Python no-op kernel registered with opreg.Library), next to a plain Python function call and,
when torch is installed, `torch.ops` on ops defined with torch.library (define + impl, Python
kernel) and with torch.library.custom_op, all in the same run.

    python benchmarks/bench_python_call.py [--iters N] [--repeats R] [--json PATH]

Figures are nanoseconds per call: the best of R repeats of N calls (the loop's own cost is
measured and subtracted).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

import opreg


def _loop_ns(call: Callable[..., Any], args: tuple, iters: int) -> int:
    t0 = time.perf_counter_ns()
    for _ in range(iters):
        call(*args)
    return time.perf_counter_ns() - t0


def measure(call: Callable[..., Any], args: tuple, iters: int, repeats: int) -> tuple:
    def empty(*_: Any) -> None:
        pass

    _loop_ns(call, args, max(iters // 10, 100))  # warm up
    best = min(_loop_ns(call, args, iters) for _ in range(repeats))
    base = min(_loop_ns(empty, args, iters) for _ in range(repeats))
    # The loop and call overhead of an empty Python function is subtracted from the op rows
    # only in the "net" column; the plain Python row shows the raw figure.
    return best / iters, (best - base) / iters


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = p.parse_args(argv)

    opreg._C._load_test_ops()
    lib = opreg.Library("bench_py", "FRAGMENT")
    lib.define("noop1(Tensor a) -> ()")
    lib.define("noop3(Tensor a, Tensor b, Tensor c) -> ()")
    lib.impl("noop1", lambda a: None, "CPU")
    lib.impl("noop3", lambda a, b, c: None, "CPU")

    x = opreg.zeros((4,))
    xn = np.zeros(4, np.float32)

    def py1(a: Any) -> None:
        pass

    def py3(a: Any, b: Any, c: Any) -> None:
        pass

    rows: List[Dict[str, Any]] = []
    cases: List[tuple] = [
        ("python function call", py1, (x,), py3, (x, x, x)),
        ("opreg.ops, C++ kernel (opreg.Tensor args)", opreg.ops._opreg_test.noop1, (x,),
         opreg.ops._opreg_test.noop3, (x, x, x)),
        ("opreg.ops, C++ kernel, .default overload", opreg.ops._opreg_test.noop1.default, (x,),
         opreg.ops._opreg_test.noop3.default, (x, x, x)),
        ("opreg.ops, C++ kernel (NumPy args, DLPack)", opreg.ops._opreg_test.noop1, (xn,),
         opreg.ops._opreg_test.noop3, (xn, xn, xn)),
        ("opreg.ops, Python kernel (opreg.Library)", opreg.ops.bench_py.noop1, (x,),
         opreg.ops.bench_py.noop3, (x, x, x)),
    ]
    torch_version = None
    try:
        import torch

        torch_version = torch.__version__
        tlib = torch.library.Library("bench_torch", "FRAGMENT")
        tlib.define("noop1(Tensor a) -> ()")
        tlib.define("noop3(Tensor a, Tensor b, Tensor c) -> ()")
        tlib.impl("noop1", lambda a: None, "CPU")
        tlib.impl("noop3", lambda a, b, c: None, "CPU")

        # Explicit schemas: this file's annotations are strings (from __future__ import annotations).
        @torch.library.custom_op("bench_torch_co::noop1", mutates_args=(), schema="(Tensor a) -> ()")
        def co1(a):
            pass

        @torch.library.custom_op("bench_torch_co::noop3", mutates_args=(),
                                 schema="(Tensor a, Tensor b, Tensor c) -> ()")
        def co3(a, b, c):
            pass

        tx = torch.zeros(4)
        cases += [
            ("torch.ops, torch.library define+impl (Python kernel)", torch.ops.bench_torch.noop1, (tx,),
             torch.ops.bench_torch.noop3, (tx, tx, tx)),
            ("torch.ops, torch.library.custom_op", torch.ops.bench_torch_co.noop1, (tx,),
             torch.ops.bench_torch_co.noop3, (tx, tx, tx)),
            ("torch.ops.aten.add (C++ kernel, for scale)", torch.ops.aten.add.Tensor, (tx, tx),
             None, None),
        ]
    except ImportError:
        pass

    for name, f1, a1, f3, a3 in cases:
        raw1, net1 = measure(f1, a1, args.iters, args.repeats)
        row: Dict[str, Any] = {"case": name, "ns_1_tensor": raw1, "net_ns_1_tensor": net1}
        if f3 is not None:
            raw3, net3 = measure(f3, a3, args.iters, args.repeats)
            row.update({"ns_3_tensors": raw3, "net_ns_3_tensors": net3})
        rows.append(row)

    w = max(len(r["case"]) for r in rows)
    print(f"per-call time, ns (best of {args.repeats} x {args.iters} calls); "
          f"python {platform.python_version()}, opreg {opreg.__version__}, torch {torch_version or 'not installed'}")
    print(f"{'case':<{w}}  {'1 tensor':>9}  {'3 tensors':>9}")
    for r in rows:
        three = f"{r['ns_3_tensors']:9.0f}" if "ns_3_tensors" in r else f"{'-':>9}"
        print(f"{r['case']:<{w}}  {r['ns_1_tensor']:9.0f}  {three}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": platform.python_version(), "opreg": opreg.__version__,
                       "torch": torch_version, "machine": platform.machine(),
                       "iters": args.iters, "repeats": args.repeats, "results": rows}, f, indent=2)
    lib._destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
