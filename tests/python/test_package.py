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


def test_no_symm_mem_placeholder():
    assert not hasattr(opreg, "symm_mem")


def test_py_typed_marker_and_stub_present():
    import importlib.resources as r

    files = {p.name for p in r.files("opreg").iterdir()}
    assert "py.typed" in files and "_C.pyi" in files


def test_clean_interpreter_exit_with_live_library():
    code = (
        "import opreg, numpy as np\n"
        "lib = opreg.Library('exit_ns', 'FRAGMENT')\n"
        "lib.define('f(Tensor x) -> Tensor')\n"
        "lib.impl('f', lambda x: x.numpy() + 1, 'CPU')\n"
        "print(opreg.ops.exit_ns.f(np.zeros(1, np.float32)).numpy()[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1.0"
