"""torch::stable's aten functions (amax, subtract, matmul, bitwise ops, floor_divide,
index_select, sort) as a stable-ABI library calls them, on torch's runtime and on opreg's:
tests/python/stable_aten_calls is built against torch's stable headers and against opreg's,
each build runs stable_aten_calls/checks.py on its runtime in a fresh process, and every result
must equal torch's own op on the same inputs (errors: the same exception type), with the same
digests on both runtimes. The opreg build needs OPREG_SDK_PREFIX (scripts/python_tests.sh sets
it); each test says why when it skips.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict

import pytest
from stable_runtime import cmake_build, run_checks

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "stable_aten_calls"
CHECKS = SOURCE / "checks.py"
SDK = os.environ.get("OPREG_SDK_PREFIX", "")


def _build(tmp: Path, defines: list) -> Path:
    r = cmake_build(SOURCE, tmp, defines)
    assert r.returncode == 0, f"building stable_aten_calls failed:\n{r.stdout[-4000:]}\n" \
                              f"{r.stderr[-4000:]}"
    return tmp / "libstable_aten_calls.so"


def _run(runtime: str, library: Path) -> Dict[str, object]:
    return run_checks(CHECKS, runtime, library)


@pytest.fixture(scope="module")
def torch_results(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, object]:
    torch = pytest.importorskip("torch", reason="torch is not installed: no torch build")
    from torch.utils import cpp_extension

    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    include = Path(cpp_extension.include_paths()[0])
    ops_h = include / "torch" / "csrc" / "stable" / "ops.h"
    if not ops_h.is_file() or "bitwise_right_shift" not in ops_h.read_text():
        pytest.skip(f"torch {torch.__version__}'s stable headers lack the functions tested "
                    "(torch 2.15 has them)")
    library = _build(tmp_path_factory.mktemp("aten-torch"),
                     ["-DSTABLE_ATEN_CALLS_BACKEND=torch", f"-DTORCH_INCLUDE_DIR={include}"])
    return _run("torch", library)


@pytest.fixture(scope="module")
def opreg_results(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, object]:
    pytest.importorskip("torch", reason="torch is not installed: the checks compare with torch")
    if not SDK:
        pytest.skip("OPREG_SDK_PREFIX is not set: point it at an opreg install prefix "
                    "(`cmake --install <build> --prefix P`; scripts/python_tests.sh does)")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    library = _build(tmp_path_factory.mktemp("aten-opreg"), [f"-DCMAKE_PREFIX_PATH={SDK}"])
    return _run("opreg", library)


def test_torch_runtime_agrees_with_torch(torch_results: Dict[str, object]) -> None:
    # The check script against its own reference: a mismatch here is a wrong expectation.
    assert torch_results["mismatches"] == []
    assert torch_results["cases"] > 300


def test_opreg_runtime_agrees_with_torch(opreg_results: Dict[str, object]) -> None:
    assert opreg_results["mismatches"] == [], "\n".join(opreg_results["mismatches"])
    assert opreg_results["cases"] > 300


def test_both_runtimes_give_the_same_bits(torch_results: Dict[str, object],
                                          opreg_results: Dict[str, object]) -> None:
    assert torch_results["cases"] == opreg_results["cases"]
    ours, theirs = opreg_results["digests"], torch_results["digests"]
    assert ours.keys() == theirs.keys()
    # Floating matmul is compared with a tolerance (BLAS vs opreg's double loops).
    differ = [k for k in ours if ours[k] != theirs[k] and not k.startswith("matmul torch.float")
              and not k.startswith("matmul torch.bfloat") and not k.startswith("matmul torch.half")]
    assert differ == []
