"""benchmarks/bench_python_call.py: a short run end to end (no figure is checked), and its
ratio arithmetic on made-up rounds."""
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_python_call.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_python_call", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    if data["torch"]:
        assert len(rows["torch.ops through opreg.torch (opreg C++ kernel)"]
                   ["rounds_ns_3_tensors"]) == 2
        assert "ns_3_tensors" not in rows["torch.ops.aten.add (C++ kernel, for scale)"]
    compared = {c["comparison"]: c for c in data["comparisons"]}
    # --no-native leaves the bridge with nothing to be held against.
    assert not any("native" in name for name in compared)
    if data["tvm_ffi"]:
        pair = compared["opreg.ops / apache-tvm-ffi, NumPy args"]
        assert set(pair) >= {"best_ratio_1", "median_ratio_1", "best_ratio_3", "median_ratio_3"}
        assert "targets: ratio of the best rounds" in r.stdout
    else:
        assert compared == {} and "targets:" not in r.stdout


def test_a_comparison_pairs_the_rows_round_by_round(bench):
    rounds = {("a", 1): [100, 300, 120, 90], ("b", 1): [50, 100, 80, 60],
              ("a", 3): [10, 20], ("b", 3): [5, 5]}
    c = bench.compare(rounds, "a / b", "a", "b", 1.2)
    assert c["best_ratio_1"] == 90 / 50
    assert c["median_ratio_1"] == (1.5 + 2.0) / 2  # rounds' ratios 2, 3, 1.5, 1.5
    assert c["best_ratio_3"] == 2.0 and c["median_ratio_3"] == 3.0
    line = bench.format_comparison(c, 6)
    assert line.startswith("a / b ") and "1.800 (1.750)" in line and line.endswith("<= 1.20")


def test_a_comparison_of_rows_with_one_arity_shows_a_dash_and_none_without_any(bench):
    c = bench.compare({("a", 1): [4], ("b", 1): [2], ("b", 3): [1]}, "a / b", "a", "b", 1.0)
    assert "best_ratio_3" not in c
    assert "3 tensors" in bench.format_comparison(c, 5)
    assert bench.format_comparison(c, 5).split("3 tensors")[1].split()[0] == "-"
    assert bench.compare({("a", 1): [4]}, "a / b", "a", "b", 1.0) is None


def test_the_call_benchmark_refuses_zero_rounds():
    r = subprocess.run([sys.executable, str(BENCH), "--repeats", "0"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 2
    assert "--iters and --repeats must be at least 1 (got 200000 and 0)" in r.stderr


def test_pairs_sharing_a_row_are_timed_as_one_group_so_each_row_runs_once_a_round(bench):
    groups = bench.timing_groups([[0, 1], [0, 2], [2, 1], [3, None], [4, 5]], 7)
    assert groups == [[0, 1, 2], [4, 5], [3], [6]]
    assert sorted(k for g in groups for k in g) == list(range(7))


def test_a_pair_without_a_target_is_shown_for_scale(bench):
    c = bench.compare({("a", 1): [3], ("b", 1): [2]}, "a / b", "a", "b", None)
    assert c["target_at_most"] is None
    assert bench.format_comparison(c, 5).endswith("(for scale)")
