"""Real third-party sources on opreg: vLLM's x86 CPU extension, from the vLLM release's source
archive on PyPI (pinned by version and SHA-256), built unchanged against an installed opreg
(scripts/real_sources/vllm_cpu_build.sh) and its ops checked through torch.ops against torch
references (scripts/real_sources/vllm_cpu_checks.py), in a fresh process.

Needs an x86-64 CPU with AVX2, OPREG_SDK_PREFIX (scripts/python_tests.sh sets it), torch, and
the package index; each skip says which was missing.
"""
from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "scripts" / "real_sources" / "vllm_cpu_build.sh"
CHECKS = REPO / "scripts" / "real_sources" / "vllm_cpu_checks.py"
VERSION = "0.33.0"
SHA256 = "f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112"
SDK = os.environ.get("OPREG_SDK_PREFIX", "")


def _index() -> str:
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def _download_sdist(dest: Path) -> Path:
    """vllm-VERSION.tar.gz from the package index's simple page, checked against SHA256."""
    page = urllib.request.urlopen(f"{_index()}/vllm/", timeout=60).read().decode()
    links = re.findall(rf'href="([^"]*/vllm-{re.escape(VERSION)}\.tar\.gz)[^"]*"', page)
    if not links:
        pytest.skip(f"the package index {_index()} lists no vllm-{VERSION}.tar.gz")
    url = links[0] if "://" in links[0] else urllib.parse.urljoin(f"{_index()}/vllm/", links[0])
    data = urllib.request.urlopen(url, timeout=300).read()
    digest = hashlib.sha256(data).hexdigest()
    assert digest == SHA256, f"{url}: sha256 {digest}, expected {SHA256}"
    path = dest / f"vllm-{VERSION}.tar.gz"
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def vllm_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if platform.machine() != "x86_64":
        pytest.skip(f"vLLM's x86 CPU extension; this machine is {platform.machine()}")
    if "avx2" not in Path("/proc/cpuinfo").read_text():
        pytest.skip("vLLM's x86 CPU extension needs AVX2; this CPU has none")
    if not SDK:
        pytest.skip("OPREG_SDK_PREFIX is not set: point it at an opreg install prefix "
                    "(`cmake --install <build> --prefix P`; scripts/python_tests.sh does)")
    pytest.importorskip("torch", reason="torch is not installed: the checks run through torch.ops")
    dest = tmp_path_factory.mktemp("vllm")
    try:
        archive = _download_sdist(dest)
    except (urllib.error.URLError, OSError) as e:
        pytest.skip(f"could not download vllm-{VERSION} from {_index()}: {e}")
    root = f"vllm-{VERSION}/csrc/"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(root)]
        tar.extractall(dest, members=members, filter="data")
    return dest / f"vllm-{VERSION}"


def test_vllm_cpu_extension_builds_unchanged_and_its_ops_match_torch(vllm_source: Path,
                                                                     tmp_path: Path) -> None:
    env = dict(os.environ, OPREG_PREFIX=SDK, PYTHON=sys.executable)
    build = subprocess.run(["bash", str(BUILD), str(vllm_source), "opreg", str(tmp_path)],
                           capture_output=True, text=True, env=env, timeout=1800)
    assert build.returncode == 0, f"building vLLM {VERSION}'s CPU extension against opreg " \
                                  f"failed:\n{build.stdout[-3000:]}\n{build.stderr[-6000:]}"
    env = {k: v for k, v in os.environ.items() if k != "OPREG_TORCH_AUTOLOAD"}
    r = subprocess.run([sys.executable, str(CHECKS), "--runtime", "opreg", "--library",
                        str(tmp_path / "_C.so"), "--out", str(tmp_path / "outputs.pt")],
                       capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, f"vllm_cpu_checks.py failed:\n{r.stdout}\n{r.stderr[-6000:]}"
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert summary["checks"] == summary["passed"] == 18, summary
