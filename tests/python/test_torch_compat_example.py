"""examples/torch_compat, a TORCH_LIBRARY kernel library with vLLM's schemas, built from the same
sources against opreg::torch_compat (an installed opreg) and against libtorch (the torch
installed here), then checked numerically through torch.ops by the same script
(compat_kernels/checks.py) in a fresh process per build: torch.ops.load_library for the
libtorch build, opreg.load_library + opreg.torch for the opreg one.

The opreg build needs an opreg install prefix in OPREG_SDK_PREFIX (scripts/python_tests.sh
installs the wheel's own build tree there); the libtorch build needs torch's CMake package.
Each test says why when it skips.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

import opreg

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "torch_compat"
CHECKS = Path(__file__).resolve().parent / "compat_kernels" / "checks.py"
SDK = os.environ.get("OPREG_SDK_PREFIX", "")
JOBS = os.environ.get("OPREG_JOBS", "2")


def _configure(source: Path, build: Path, defines: List[str]) -> subprocess.CompletedProcess:
    cmd = ["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", *defines]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    return subprocess.run(cmd, capture_output=True, text=True)


def _cmake_build(source: Path, build: Path, defines: List[str]) -> subprocess.CompletedProcess:
    configure = _configure(source, build, defines)
    if configure.returncode != 0:
        return configure
    return subprocess.run(["cmake", "--build", str(build), "-j", JOBS], capture_output=True,
                          text=True)


def _need_sdk() -> None:
    if not SDK:
        pytest.skip("OPREG_SDK_PREFIX is not set: point it at an opreg install prefix "
                    "(`cmake --install <build> --prefix P`; scripts/python_tests.sh does)")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")


@pytest.fixture(scope="module")
def opreg_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need_sdk()
    build = tmp_path_factory.mktemp("compat-opreg")
    r = _cmake_build(EXAMPLE, build, [f"-DCMAKE_PREFIX_PATH={SDK}"])
    assert r.returncode == 0, f"building examples/torch_compat against opreg failed:\n" \
                              f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return build / "libcompat_kernels.so"


@pytest.fixture(scope="module")
def torch_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason="torch is not installed: no libtorch build")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    build = tmp_path_factory.mktemp("compat-torch")
    defines = ["-DCOMPAT_KERNELS_BACKEND=torch",
               f"-DCMAKE_PREFIX_PATH={torch.utils.cmake_prefix_path}"]
    configure = _configure(EXAMPLE, build, defines)
    if configure.returncode != 0:
        pytest.skip(f"torch {torch.__version__}'s CMake package does not configure here "
                    f"(so no libtorch build to compare with):\n{configure.stderr[-2000:]}")
    r = _cmake_build(EXAMPLE, build, defines)
    assert r.returncode == 0, f"building examples/torch_compat against libtorch failed:\n" \
                              f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return build / "libcompat_kernels.so"


def _run_checks(backend: str, library: Path, loader: str = "opreg") -> Dict[str, object]:
    r = subprocess.run([sys.executable, str(CHECKS), "--backend", backend, "--library",
                        str(library), "--loader", loader], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, f"checks.py --backend {backend} failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def opreg_results(opreg_build: Path) -> Dict[str, object]:
    return _run_checks("opreg", opreg_build)


def test_opreg_build_passes_every_check(opreg_results: Dict[str, object]) -> None:
    # 15 check functions covering 21 ops (the activations share one check).
    assert len(opreg_results["checks"]) == 15
    schemas = opreg_results["schemas"]
    assert len(schemas) == 21, sorted(schemas)
    assert schemas["compat_kernels::static_scaled_fp8_quant.default"] == (
        "compat_kernels::static_scaled_fp8_quant(Tensor($0! -> ) result, Tensor input, "
        "Tensor scale, (int, int)? group_shape=None) -> ()")


def test_opreg_build_loads_with_torch_ops_load_library(
        opreg_build: Path, opreg_results: Dict[str, object]) -> None:
    # As a libtorch build is loaded: with opreg.torch imported, the library's ops are in
    # torch.ops by the time torch.ops.load_library returns.
    results = _run_checks("opreg", opreg_build, loader="torch")
    assert results["loader"] == "torch"
    assert results["checks"] == opreg_results["checks"]
    assert results["schemas"] == opreg_results["schemas"]


def test_libtorch_build_agrees(torch_build: Path, opreg_results: Dict[str, object]) -> None:
    torch_results = _run_checks("torch", torch_build)
    assert torch_results["checks"] == opreg_results["checks"]
    # The same schemas, as torch prints them, whichever library registered them.
    assert torch_results["schemas"] == opreg_results["schemas"]


PACKAGE = EXAMPLE / "python" / "compat_kernels"
PACKAGE_USER = """
import json
import sys

import torch  # no `import opreg`: with the opreg build, torch's backend autoload brings it in

import compat_kernels

torch.manual_seed(0)
a = torch.randn(3, 5, requires_grad=True)
b = torch.randn(3, 5, requires_grad=True)
out = compat_kernels.muladd(a, b, 0.5)
torch.testing.assert_close(out, a * b + 0.5)
out.sum().backward()
torch.testing.assert_close(a.grad, b.detach())
torch.testing.assert_close(b.grad, a.detach())
# torch.library's own test of a custom op: schema, fake, autograd registration, AOT dispatch.
for args in [(torch.randn(3), torch.randn(3), 1.25),
             (torch.randn(2, 4, requires_grad=True), torch.randn(2, 4, requires_grad=True), -3.0),
             (torch.randn(4, 3).t(), torch.randn(3, 4), 0.0)]:
    torch.library.opcheck(torch.ops.compat_kernels.muladd.default, args)
f = torch.compile(lambda x, y: compat_kernels.muladd(x, y, 2.0) * 3, fullgraph=True,
                  backend="aot_eager")
x, y = torch.randn(8), torch.randn(8)
torch.testing.assert_close(f(x, y), (x * y + 2.0) * 3)
try:
    compat_kernels.muladd(torch.ones(2), torch.ones(3), 1.0)
except RuntimeError as e:
    message = str(e)
print(json.dumps({"grad_a": a.grad.tolist(), "error": message.splitlines()[0],
                  "opreg_torch": "opreg.torch" in sys.modules}))
"""


def _run_package(library: Path, tmp: Path) -> Dict[str, object]:
    shutil.copytree(PACKAGE, tmp / "compat_kernels")
    shutil.copy(library, tmp / "compat_kernels" / library.name)
    (tmp / "user.py").write_text(PACKAGE_USER)
    env = {k: v for k, v in os.environ.items() if k not in ("OPREG_TORCH_AUTOLOAD",
                                                              "TORCH_DEVICE_BACKEND_AUTOLOAD")}
    env["PYTHONPATH"] = str(tmp)
    r = subprocess.run([sys.executable, str(tmp / "user.py")], capture_output=True, text=True,
                       timeout=600, env=env, cwd=tmp)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_python_package_runs_unchanged_on_the_opreg_build(opreg_build: Path,
                                                           tmp_path: Path) -> None:
    """The example's Python package (torch.ops.load_library, then torch.library.register_fake
    and register_autograd, as the custom C++ op tutorial's package does) on the opreg build,
    with no opreg line in it or in its user: autograd, opcheck and a fullgraph compile."""
    pytest.importorskip("torch", reason="torch is not installed")
    result = _run_package(opreg_build, tmp_path)
    assert result["opreg_torch"] is True
    # opreg names the op in front of the kernel's own message.
    assert result["error"] == "[compat_kernels::muladd] muladd: a and b must have the same shape"


def test_python_package_agrees_on_the_libtorch_build(opreg_build: Path, torch_build: Path,
                                                     tmp_path: Path) -> None:
    """The same package with the libtorch build gives the same gradients and error message
    (less the op name opreg puts in front)."""
    on_opreg = _run_package(opreg_build, tmp_path / "opreg")
    on_torch = _run_package(torch_build, tmp_path / "torch")
    assert on_torch["grad_a"] == on_opreg["grad_a"]
    assert on_opreg["error"] == "[compat_kernels::muladd] " + on_torch["error"]


def test_sources_are_plain_libtorch_code() -> None:
    """No opreg name appears in the example's sources: they are what a libtorch library has."""
    for path in sorted(p for d in ("csrc", "python") for p in (EXAMPLE / d).rglob("*")):
        if path.is_file():
            text = path.read_text()
            assert "opreg" not in text.lower(), path
            assert "OPREG" not in text, path


BROKEN = textwrap.dedent("""\
    #include <torch/library.h>

    void twice(torch::Tensor& out, const torch::Tensor& x) { out.copy_(x); out.mul_(2); }

    TORCH_LIBRARY(broken_compat, m) {
      m.def("first(Tensor! out, Tensor x) -> ()");
      m.def("bad(Tensor x -> Tensor");                      // a schema syntax error
      m.impl("first", torch::kCPU, &twice);
      m.impl("first", c10::DispatchKey::AutogradCPU, &twice);  // a key opreg lacks
      m.def("last(Tensor! out, Tensor x) -> ()");
      m.impl("last", torch::kCPU, &twice);
    }
    """)


def test_load_library_reports_every_failed_registration_and_keeps_the_rest(
        tmp_path: Path) -> None:
    _need_sdk()
    src = tmp_path / "src"
    src.mkdir()
    (src / "broken.cpp").write_text(BROKEN)
    (src / "CMakeLists.txt").write_text(textwrap.dedent("""\
        cmake_minimum_required(VERSION 3.25)
        project(broken LANGUAGES CXX)
        set(CMAKE_CXX_STANDARD 17)
        find_package(opreg CONFIG REQUIRED)
        add_library(broken SHARED broken.cpp)
        target_link_libraries(broken PRIVATE opreg::torch_compat)
        """))
    r = _cmake_build(src, tmp_path / "build", [f"-DCMAKE_PREFIX_PATH={SDK}"])
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    library = tmp_path / "build" / "libbroken.so"
    script = textwrap.dedent(f"""\
        import numpy as np, opreg
        try:
            opreg.load_library({str(library)!r})
        except opreg.RegistrationError as e:
            assert len(e.errors) == 2, e.errors
            assert "bad(Tensor x -> Tensor" in e.errors[0] and "broken.cpp:7" in e.errors[0], e
            assert "dispatch key AutogradCPU has no opreg counterpart" in e.errors[1], e
            assert "broken.cpp:9" in e.errors[1], e
        else:
            raise AssertionError("no RegistrationError")
        x = np.arange(4, dtype=np.float32)
        for op in (opreg.ops.broken_compat.first, opreg.ops.broken_compat.last):
            out = np.zeros(4, np.float32)
            op(out, x)
            assert (out == 2 * x).all(), out
        opreg.load_library({str(library)!r})  # a second load is a no-op
        print("ok")
        """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stdout + run.stderr


def test_load_library_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such library"):
        opreg.load_library(tmp_path / "nope.so")


def test_load_library_not_a_library(tmp_path: Path) -> None:
    path = tmp_path / "text.so"
    path.write_text("not an ELF file")
    with pytest.raises(OSError, match="could not load .*: it is not an ELF shared library"):
        opreg.load_library(path)


def test_load_library_of_another_architecture_says_so(tmp_path: Path) -> None:
    # A copy of a real library of this machine with its ELF header's machine field changed to
    # aarch64's (or x86_64's on an aarch64 machine): glibc alone reports "No such file or
    # directory".
    here = Path(opreg._C.__file__).read_bytes()
    machine = int.from_bytes(here[18:20], "little")
    other = 183 if machine != 183 else 62
    foreign = tmp_path / "foreign.so"
    foreign.write_bytes(here[:18] + other.to_bytes(2, "little") + here[20:])
    expected = "aarch64" if other == 183 else "x86_64"
    with pytest.raises(OSError, match=f"it is built for 64-bit {expected}, and this process runs"):
        opreg.load_library(foreign)
