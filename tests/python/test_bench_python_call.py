"""benchmarks/bench_python_call.py runs end to end (a short run; no figure is checked)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_python_call.py"


def test_the_call_benchmark_prints_its_table_and_writes_every_round(tmp_path):
    out = tmp_path / "calls.json"
    r = subprocess.run([sys.executable, str(BENCH), "--iters", "300", "--repeats", "2",
                        "--no-native", "--json", str(out)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "opreg.ops, C++ kernel (opreg.Tensor args)" in r.stdout
    data = json.loads(out.read_text())
    rows = {row["case"]: row for row in data["results"]}
    numpy_row = rows["opreg.ops, C++ kernel (NumPy args)"]
    assert len(numpy_row["rounds_ns_1_tensor"]) == 2
    assert len(numpy_row["rounds_ns_3_tensors"]) == 2
    assert numpy_row["ns_1_tensor"] == min(numpy_row["rounds_ns_1_tensor"])
    assert "torch.ops.aten.add (C++ kernel, for scale)" in rows
    assert "ns_3_tensors" not in rows["torch.ops.aten.add (C++ kernel, for scale)"]
    compared = {c["comparison"]: c for c in data["comparisons"]}
    # --no-native leaves the bridge with nothing to be held against.
    assert not any("native" in name for name in compared)
    try:
        import tvm_ffi  # noqa: F401
    except ImportError:
        pytest.skip("apache-tvm-ffi is not installed: the benchmark ran, with no pair to compare")
    pair = compared["opreg.ops / apache-tvm-ffi, NumPy args"]
    for arity in (1, 3):
        assert pair[f"best_ratio_{arity}"] > 0 and pair[f"median_ratio_{arity}"] > 0
    assert "targets: ratio of the best rounds" in r.stdout


def test_the_call_benchmark_refuses_zero_rounds():
    r = subprocess.run([sys.executable, str(BENCH), "--repeats", "0"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2
    assert "--iters and --repeats must be at least 1 (got 200000 and 0)" in r.stderr
