import subprocess
import sys

import opreg


def test_version_and_introspection():
    assert opreg.__version__ == "0.1.0"
    ops = opreg.list_ops()
    assert "_opreg_test::noop1" in ops
    dump = opreg.dump_op("_opreg_test::scale")
    assert "_opreg_test::scale(Tensor x, float alpha=2., *, int repeat=1) -> Tensor" in dump
    assert "CPU" in dump
    assert opreg.static_registration_errors() == []


def test_symm_mem_submodule():
    import opreg.symm_mem as sm

    assert opreg.symm_mem is sm
    assert sm.FileStore is opreg._C._symm_mem.FileStore
    assert "symm_mem::one_shot_all_reduce" in opreg.list_ops()


def test_py_typed_marker_and_stub_present():
    import importlib.resources as r

    files = {p.name for p in r.files("opreg").iterdir()}
    assert "py.typed" in files
    # Stubs of the extension and its submodules (a stub package beside _C*.so, as torch does).
    stubs = {p.name for p in r.files("opreg").joinpath("_C").iterdir()}
    assert {"__init__.pyi", "_symm_mem.pyi"} <= stubs


def test_clean_interpreter_exit_with_live_library():
    code = (
        "import opreg, numpy as np\n"
        "lib = opreg.Library('exit_ns', 'FRAGMENT')\n"
        "lib.define('f(Tensor x) -> Tensor')\n"
        "lib.impl('f', lambda x: x.numpy() + 1, 'CPU')\n"
        "print(np.asarray(opreg.ops.exit_ns.f(np.zeros(1, np.float32)))[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"
