"""examples/torch_stable, a kernel library written for torch's stable ABI (STABLE_TORCH_LIBRARY,
torch::stable::Tensor, TORCH_BOX) with vLLM's op schemas, built from the same sources against
opreg's stable headers (opreg::torch_stable, from an installed opreg) and against torch's own
stable headers (the torch installed here, TORCH_TARGET_VERSION 2.11 as vLLM sets it, linking no
torch library), then checked through torch.ops by one script (stable_kernels/checks.py) in a
fresh process per case:

- the torch build on torch's runtime (torch.ops.load_library),
- the opreg build on opreg's runtime (opreg.load_library + opreg.torch),
- the opreg build on torch's runtime: the binary made against opreg's headers, its C shim
  calls bound to libtorch's (one binary, two runtimes).

Every case must pass every check and produce bit-identical results and the same schemas.
The opreg build needs OPREG_SDK_PREFIX (scripts/python_tests.sh sets it); each test says why
when it skips.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from stable_runtime import cmake_build, run_checks

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "torch_stable"
CHECKS = Path(__file__).resolve().parent / "stable_kernels" / "checks.py"
SDK = os.environ.get("OPREG_SDK_PREFIX", "")


def _cmake_build(build: Path, defines: List[str]) -> subprocess.CompletedProcess:
    return cmake_build(EXAMPLE, build, defines)


@pytest.fixture(scope="module")
def opreg_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SDK:
        pytest.skip("OPREG_SDK_PREFIX is not set: point it at an opreg install prefix "
                    "(`cmake --install <build> --prefix P`; scripts/python_tests.sh does)")
    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    build = tmp_path_factory.mktemp("stable-opreg")
    r = _cmake_build(build, [f"-DCMAKE_PREFIX_PATH={SDK}"])
    assert r.returncode == 0, f"building examples/torch_stable against opreg failed:\n" \
                              f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return build / "libstable_kernels.so"


@pytest.fixture(scope="module")
def torch_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch = pytest.importorskip("torch", reason="torch is not installed: no torch build")
    from torch.utils import cpp_extension

    if shutil.which("cmake") is None:
        pytest.skip("cmake is not on PATH")
    include = Path(cpp_extension.include_paths()[0])
    if not (include / "torch" / "csrc" / "stable" / "c" / "shim.h").is_file():
        pytest.skip(f"torch {torch.__version__} has no stable-ABI 2.10+ headers")
    build = tmp_path_factory.mktemp("stable-torch")
    r = _cmake_build(build, ["-DSTABLE_KERNELS_BACKEND=torch", f"-DTORCH_INCLUDE_DIR={include}"])
    assert r.returncode == 0, f"building examples/torch_stable against torch failed:\n" \
                              f"{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return build / "libstable_kernels.so"


def _run_checks(runtime: str, library: Path) -> Dict[str, object]:
    return run_checks(CHECKS, runtime, library)


@pytest.fixture(scope="module")
def opreg_results(opreg_build: Path) -> Dict[str, object]:
    pytest.importorskip("torch", reason="torch is not installed: the checks run through torch.ops")
    return _run_checks("opreg", opreg_build)


def test_opreg_build_on_opreg_passes_every_check(opreg_results: Dict[str, object]) -> None:
    assert len(opreg_results["checks"]) == 11
    schemas = opreg_results["schemas"]
    assert len(schemas) == 16, sorted(schemas)
    assert schemas["rotary_embedding"] == (
        "stable_kernels::rotary_embedding(Tensor positions, Tensor($0! -> ) query, "
        "Tensor($1! -> )? key, int head_size, Tensor cos_sin_cache, bool is_neox) -> ()")
    assert len(opreg_results["digests"]) == 41


def test_torch_build_on_torch_agrees_bit_for_bit(
        torch_build: Path, opreg_results: Dict[str, object]) -> None:
    torch_results = _run_checks("torch", torch_build)
    assert torch_results["checks"] == opreg_results["checks"]
    assert torch_results["schemas"] == opreg_results["schemas"]
    assert torch_results["digests"] == opreg_results["digests"]


def test_opreg_build_runs_on_torch_unchanged(
        opreg_build: Path, opreg_results: Dict[str, object]) -> None:
    # The binary made against opreg's headers, loaded into torch with libtorch global first:
    # its aoti_torch_* calls bind to torch's, and its kernels run on torch's runtime.
    results = _run_checks("torch", opreg_build)
    assert results["digests"] == opreg_results["digests"]
    assert results["schemas"] == opreg_results["schemas"]


def test_sources_are_plain_stable_abi_code() -> None:
    """No opreg name appears in the example's sources: they are what a torch library has."""
    for path in sorted((EXAMPLE / "csrc").rglob("*")):
        if path.is_file():
            text = path.read_text()
            assert "opreg" not in text.lower(), path


AUTOGRAD_PACKAGE = """
import sys
import torch  # no `import opreg` anywhere: torch's backend autoload brings opreg.torch in

torch.ops.load_library(sys.argv[1])
op = torch.ops.stable_kernels.rms_norm_out_of_place


def setup_context(ctx, inputs, output):
    x, w, eps = inputs
    ctx.save_for_backward(x, w)
    ctx.eps = eps


def backward(ctx, grad):
    x, w = ctx.saved_tensors
    with torch.enable_grad():
        xd, wd = x.detach().requires_grad_(), w.detach().requires_grad_()
        y = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + ctx.eps) * wd
        gx, gw = torch.autograd.grad(y, (xd, wd), grad)
    return gx, gw, None


torch.library.register_autograd("stable_kernels::rms_norm_out_of_place", backward,
                                setup_context=setup_context)
torch.library.register_fake("stable_kernels::rms_norm_out_of_place")(
    lambda x, w, eps: torch.empty_like(x))
x = torch.randn(4, 16, requires_grad=True)
w = torch.randn(16, requires_grad=True)
op(x, w, 1e-6).sum().backward()
xr, wr = x.detach().requires_grad_(), w.detach().requires_grad_()
(xr * torch.rsqrt(xr.pow(2).mean(-1, keepdim=True) + 1e-6) * wr).sum().backward()
torch.testing.assert_close(x.grad, xr.grad)
torch.testing.assert_close(w.grad, wr.grad)
compiled = torch.compile(lambda a, b: op(a, b, 1e-6) * 2, fullgraph=True, backend="aot_eager")
torch.testing.assert_close(compiled(x.detach(), w.detach()), op(x.detach(), w.detach(), 1e-6) * 2)
print("opreg.torch" in sys.modules)
"""


def test_torch_library_package_runs_unchanged_on_the_opreg_build(opreg_build: Path,
                                                                  tmp_path: Path) -> None:
    """A package written for torch.library (torch.ops.load_library, then register_autograd and
    register_fake) on the opreg build, with no opreg line: opreg.torch comes in through torch's
    backend autoload (the `torch.backends` entry point of the installed wheel)."""
    pytest.importorskip("torch", reason="torch is not installed")
    script = tmp_path / "package.py"
    script.write_text(AUTOGRAD_PACKAGE)
    env = {k: v for k, v in os.environ.items() if k not in ("OPREG_TORCH_AUTOLOAD",
                                                              "TORCH_DEVICE_BACKEND_AUTOLOAD")}
    r = subprocess.run([sys.executable, str(script), str(opreg_build)], capture_output=True,
                       text=True, timeout=600, env=env)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}"
    assert r.stdout.strip().splitlines()[-1] == "True"
    # Turned off, the library's ops are not torch ops: the autoload is what made them so.
    env["OPREG_TORCH_AUTOLOAD"] = "0"
    r = subprocess.run([sys.executable, str(script), str(opreg_build)], capture_output=True,
                       text=True, timeout=600, env=env)
    assert r.returncode != 0
    assert "rms_norm_out_of_place" in r.stderr
