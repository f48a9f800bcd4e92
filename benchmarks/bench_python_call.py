#!/usr/bin/env python3
"""Per-call overhead of calling an op from Python.

No-op ops with 1 and 3 tensor arguments, all in the same run:
- `opreg.ops` (C++ no-op kernel) with opreg.Tensor, NumPy and torch arguments, and a Python
  no-op kernel registered with opreg.Library; a plain Python function call for scale;
- when torch is installed: the same C++ op as `torch.ops._opreg_test.*` through opreg.torch;
  a native libtorch `TORCH_LIBRARY` C++ no-op op, built here with torch.utils.cpp_extension
  (about a minute; `--no-native` skips it); `torch.ops` on ops defined with torch.library
  (define + impl, Python kernel) and torch.library.custom_op; torch.ops.aten.add;
- when apache-tvm-ffi is installed (PyPI): its C++ no-op function `testing.nop` with torch
  and NumPy arguments.

With `--device cuda` every tensor is a CUDA tensor (opreg.Tensor rows hold torch's CUDA memory;
the NumPy rows are left out): the same calls, plus the stream lookup a CUDA call makes.

    python benchmarks/bench_python_call.py [--device cpu|cuda] [--iters N] [--repeats R]
        [--no-native] [--json PATH]

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


_NATIVE_SOURCE = r"""
#include <torch/library.h>

namespace {
void noop1(const at::Tensor&) {}
void noop3(const at::Tensor&, const at::Tensor&, const at::Tensor&) {}
}  // namespace

TORCH_LIBRARY(bench_native, m) {
  m.def("noop1(Tensor a) -> ()");
  m.def("noop3(Tensor a, Tensor b, Tensor c) -> ()");
}

TORCH_LIBRARY_IMPL(bench_native, CPU, m) {
  m.impl("noop1", &noop1);
  m.impl("noop3", &noop3);
}

TORCH_LIBRARY_IMPL(bench_native, CUDA, m) {
  m.impl("noop1", &noop1);
  m.impl("noop3", &noop3);
}
"""


def _native_torch_ops() -> Any:
    """torch.ops.bench_native: no-op ops written against libtorch, built and loaded here."""
    import torch
    from torch.utils.cpp_extension import load_inline

    print("building the native TORCH_LIBRARY op with torch.utils.cpp_extension ...", flush=True)
    load_inline(name="opreg_bench_native", cpp_sources=[_NATIVE_SOURCE], is_python_module=False,
                extra_cflags=["-O2"], verbose=False)
    return torch.ops.bench_native


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--iters", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    p.add_argument("--no-native", action="store_true",
                   help="skip the native TORCH_LIBRARY op (no C++ compile)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where the tensors live (cuda needs torch with a CUDA device)")
    args = p.parse_args(argv)
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

    rows: List[Dict[str, Any]] = []
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
    try:
        import torch

        torch_version = torch.__version__
        tlib = torch.library.Library("bench_torch", "FRAGMENT")
        tlib.define("noop1(Tensor a) -> ()")
        tlib.define("noop3(Tensor a, Tensor b, Tensor c) -> ()")
        tlib.impl("noop1", lambda a: None, key)
        tlib.impl("noop3", lambda a, b, c: None, key)

        # Explicit schemas: this file's annotations are strings (from __future__ import annotations).
        @torch.library.custom_op("bench_torch_co::noop1", mutates_args=(), schema="(Tensor a) -> ()")
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
        cases += [
            ("torch.ops, torch.library define+impl (Python kernel)", torch.ops.bench_torch.noop1, (tx,),
             torch.ops.bench_torch.noop3, (tx, ty, tz)),
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

    for name, f1, a1, f3, a3 in cases:
        raw1, net1 = measure(f1, a1, args.iters, args.repeats)
        row: Dict[str, Any] = {"case": name, "ns_1_tensor": raw1, "net_ns_1_tensor": net1}
        if f3 is not None:
            raw3, net3 = measure(f3, a3, args.iters, args.repeats)
            row.update({"ns_3_tensors": raw3, "net_ns_3_tensors": net3})
        rows.append(row)

    w = max(len(r["case"]) for r in rows)
    print(f"per-call time, ns (best of {args.repeats} x {args.iters} calls, {args.device} tensors); "
          f"python {platform.python_version()}, opreg {opreg.__version__}, torch {torch_version or 'not installed'}, "
          f"apache-tvm-ffi {tvm_ffi_version or 'not installed'}")
    print(f"{'case':<{w}}  {'1 tensor':>9}  {'3 tensors':>9}")
    for r in rows:
        three = f"{r['ns_3_tensors']:9.0f}" if "ns_3_tensors" in r else f"{'-':>9}"
        print(f"{r['case']:<{w}}  {r['ns_1_tensor']:9.0f}  {three}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"python": platform.python_version(), "opreg": opreg.__version__,
                       "torch": torch_version, "tvm_ffi": tvm_ffi_version,
                       "machine": platform.machine(), "device": args.device,
                       "iters": args.iters, "repeats": args.repeats, "results": rows}, f, indent=2)
    lib._destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
