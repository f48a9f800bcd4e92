"""opreg._torch_native: the bridge built against the torch the package was built with. It is used
only with that very torch (checked here by changing the version it is compared with), is left for
the stable-ABI bridge with OPREG_TORCH_BRIDGE=stable, carries Scalar arguments (the stable ABI has
none), keeps a torch tensor alive while an opreg kernel holds it, and agrees with the other
bridges (test_torch_cpp_bridge.py::test_cpp_and_python_kernels_agree runs all three)."""
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import opreg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")

import opreg.torch as opreg_torch  # noqa: E402
from opreg.torch import _kernels  # noqa: E402


def _native_built():
    import importlib.util
    return importlib.util.find_spec("opreg._torch_native_build") is not None


needs_native = pytest.mark.skipif(
    _kernels.BRIDGE != "native",
    reason="the native bridge is not in use here: "
           f"{_kernels.NATIVE_UNAVAILABLE or 'Python kernels'}")


def test_the_native_bridge_is_used_with_its_own_torch_only(monkeypatch):
    if not _native_built():
        pytest.skip("opreg._torch_native was not built (no torch in the build environment)")
    if os.environ.get("OPREG_TORCH_BRIDGE") == "stable":
        assert _kernels.BRIDGE == "stable"
        return
    from opreg import _torch_native_build as build
    assert (build.TORCH_VERSION, build.TORCH_GIT_VERSION) == (torch.__version__,
                                                              torch.version.git_version)
    if os.environ.get("OPREG_TORCH_PYTHON_KERNELS") != "1":
        assert _kernels.BRIDGE == "native"
    # Another torch (a different version, or the same version from another commit): refused,
    # naming both.
    monkeypatch.setattr(torch, "__version__", "2.99.0")
    module, why = _kernels._native_bridge()
    assert module is None
    assert build.TORCH_VERSION in why and "2.99.0" in why
    monkeypatch.undo()
    monkeypatch.setattr(torch.version, "git_version", "0" * 40)
    module, why = _kernels._native_bridge()
    assert module is None and "0" * 40 in why
    monkeypatch.setenv("OPREG_TORCH_BRIDGE", "stable")
    assert _kernels._native_bridge() == (None, "OPREG_TORCH_BRIDGE=stable")


def test_opreg_torch_bridge_stable_selects_the_stable_bridge():
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    env = dict(os.environ, OPREG_TORCH_BRIDGE="stable")
    env.pop("OPREG_TORCH_PYTHON_KERNELS", None)
    out = subprocess.run(
        [sys.executable, "-c", "import opreg.torch as t; print(t._kernels.BRIDGE, "
         "sorted(t.python_kernels()))"],
        env=env, check=True, capture_output=True, text=True, timeout=300).stdout
    if (major, minor) < (2, 11):
        assert out.startswith(" "), out  # no bridge: Python kernels
    else:
        assert out.startswith("stable "), out
        if "opreg::add" in opreg.list_ops():
            assert "'opreg::add'" in out, out  # Scalar alpha: a Python kernel there


@needs_native
def test_scalar_arguments_cross_the_native_bridge():
    lib = opreg.Library("native_scalar_ns", "DEF")
    lib.define("scale(Tensor x, Scalar s, Scalar? t=None) -> (Tensor, Scalar)")
    seen = []

    def scale(x, s, t):
        seen.append((s, t))
        return np.asarray(x) * s, s

    lib.impl("scale", scale, "CPU")
    assert "native_scalar_ns::scale" not in opreg_torch.python_kernels()
    x = torch.arange(3, dtype=torch.float64)
    for s in (2, 2.5, True):
        r, back = torch.ops.native_scalar_ns.scale(x, s)
        torch.testing.assert_close(r, x * s)
        assert back == s and type(back) is type(s)
    torch.ops.native_scalar_ns.scale(x, 1, t=3.5)
    assert seen[-1] == (1, 3.5)
    lib._destroy()


@needs_native
def test_builtin_scalar_ops_take_the_native_kernel():
    if "opreg::add" not in opreg.list_ops():
        pytest.skip("opreg::ops not linked in this build")
    assert "opreg::add" not in opreg_torch.python_kernels()
    assert "opreg::add.out" not in opreg_torch.python_kernels()
    x, y = torch.randn(4, 6), torch.randn(4, 6)
    torch.testing.assert_close(torch.ops.opreg.add(x, y, alpha=3), x + 3 * y)
    out = torch.empty(4, 6)
    version = out._version
    assert torch.ops.opreg.add.out(x, y, alpha=0.5, out=out) is out
    torch.testing.assert_close(out, x + 0.5 * y)
    assert out._version > version
    # A strided (non-contiguous) argument keeps its strides.
    v = x.t()
    torch.testing.assert_close(torch.ops.opreg.add(v, v, alpha=1), 2 * v)


@needs_native
def test_a_kernel_that_keeps_its_argument_keeps_the_torch_tensor_alive():
    lib = opreg.Library("native_keep_ns", "DEF")
    lib.define("keep(Tensor x) -> ()")
    kept = []
    lib.impl("keep", lambda x: kept.append(x), "CPU")
    x = torch.arange(5, dtype=torch.float32) * 3
    torch.ops.native_keep_ns.keep(x)
    del x
    gc.collect()
    assert np.asarray(kept[0]).tolist() == [0.0, 3.0, 6.0, 9.0, 12.0]
    kept.clear()
    lib._destroy()


@needs_native
def test_a_call_borrows_its_arguments_and_a_kept_one_takes_its_own_reference():
    # The call's opreg tensors borrow the reference torch's stack holds: a kernel that keeps
    # nothing leaves the torch tensor's count as it was, one that keeps its argument adds one
    # reference (taken as the call ends), dropped when the kept tensor goes.
    lib = opreg.Library("native_borrow_ns", "DEF")
    lib.define("keep(Tensor x, Tensor y) -> ()")
    lib.define("peek(Tensor x, Tensor y) -> ()")
    kept = []
    lib.impl("keep", lambda x, y: kept.append(x), "CPU")
    lib.impl("peek", lambda x, y: None, "CPU")
    x, y = torch.arange(4.0), torch.ones(2)
    assert (x._use_count(), y._use_count()) == (1, 1)
    torch.ops.native_borrow_ns.peek(x, y)
    assert (x._use_count(), y._use_count()) == (1, 1)
    torch.ops.native_borrow_ns.keep(x, y)
    assert (x._use_count(), y._use_count()) == (2, 1)
    torch.ops.native_borrow_ns.keep(x, x)  # one torch tensor passed twice is one opreg tensor
    assert x._use_count() == 3
    kept.clear()
    gc.collect()
    assert (x._use_count(), y._use_count()) == (1, 1)
    lib._destroy()


@needs_native
def test_native_errors_keep_their_kind_and_name_the_argument():
    lib = opreg.Library("native_err_ns", "DEF")
    lib.define("f(Tensor x, int n) -> Tensor")
    lib.impl("f", lambda x, n: x, "CPU")
    with pytest.raises(TypeError, match=r"\[native_err_ns::f\] argument 'x' \(#0\)"):
        torch.ops.native_err_ns.f(torch.ones(2, dtype=torch.complex64), 1)
    lib.define("g(Tensor x) -> Tensor")

    def g(x):
        raise NotImplementedError("g is for later")

    lib.impl("g", g, "CPU")
    with pytest.raises(NotImplementedError, match="g is for later"):
        torch.ops.native_err_ns.g(torch.ones(2))
    lib._destroy()


def test_tuple_arguments_cross():
    # vLLM's `(int, int)? group_shape` style: a tuple-typed argument (the stable ABI has no
    # tuples, so there the op takes the Python-kernel path; the native bridge carries it).
    lib = opreg.Library("native_tuple_ns", "DEF")
    lib.define("tup(Tensor x, (int, int)? shape=None) -> int")
    lib.impl("tup", lambda x, shape: -1 if shape is None else shape[0] * 100 + shape[1], "CPU")
    if _kernels.BRIDGE == "native":
        assert "native_tuple_ns::tup" not in opreg_torch.python_kernels()
    x = torch.ones(2)
    assert torch.ops.native_tuple_ns.tup(x, (1, 32)) == 132
    assert torch.ops.native_tuple_ns.tup(x) == -1
    lib._destroy()
