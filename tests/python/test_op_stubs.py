"""The typed stubs of opreg.ops (python_bindings/opreg/_ops.pyi): current with the registered
schemas, and useful to a type checker (right calls pass, wrong ones are caught)."""
import os
import subprocess
import sys
import textwrap

import pytest

import opreg


def test_committed_stub_matches_the_schemas():
    stub = os.path.join(os.path.dirname(opreg.__file__), "_ops.pyi")
    with open(stub) as f:
        committed = f.read()
    # A fresh interpreter: only the built-in libraries' registrations, none of other tests'.
    generated = subprocess.run([sys.executable, "-m", "opreg._stubgen"], check=True,
                               capture_output=True, text=True).stdout
    assert committed == generated, (
        "python_bindings/opreg/_ops.pyi is stale: regenerate it with "
        "`python -m opreg._stubgen > python_bindings/opreg/_ops.pyi`")


def test_type_checker_sees_op_signatures(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed")
    if "opreg::rms_norm" not in opreg.list_ops():
        pytest.skip("opreg::ops not linked in this build")
    good = tmp_path / "good.py"
    good.write_text(textwrap.dedent("""
        import numpy as np
        import opreg
        x = np.ones((2, 8), np.float32)
        w = np.ones(8, np.float32)
        y = opreg.ops.opreg.rms_norm(x, w, eps=1e-6)
        opreg.ops.opreg.rms_norm.out(x, w, out=y)
        q, s = opreg.ops.opreg.per_token_quant(x, "int8")
        opreg.ops.opreg.fused_add_rms_norm_(x, x, w)
        z = opreg.ops.other_ns.anything(1, 2)  # other namespaces stay untyped
    """))
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent("""
        import opreg
        opreg.ops.opreg.rms_norm(1, 2, epsilon=1e-6)
        opreg.ops.opreg.softmax(1, dim="last")
        opreg.ops.opreg.add.out(1, 2)
    """))

    def mypy(path):
        return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental",
                               "--ignore-missing-imports", str(path)],
                              capture_output=True, text=True, cwd=tmp_path)

    ok = mypy(good)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    failed = mypy(bad)
    assert failed.returncode == 1, failed.stdout
    assert 'Unexpected keyword argument "epsilon"' in failed.stdout
    assert 'Argument "dim" to "__call__" of "_opreg_softmax" has incompatible type "str"' \
        in failed.stdout
    assert 'Missing named argument "out"' in failed.stdout
