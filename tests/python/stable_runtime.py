"""What the stable-ABI tests share: building a library from CMake sources against opreg's or
torch's stable headers, and loading a built library into torch's runtime or opreg's.

Used by test_torch_stable_example.py, test_stable_aten_calls.py and the check scripts they run
in fresh processes (which import this file from their parent directory).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

JOBS = os.environ.get("OPREG_JOBS", "2")


def cmake_build(source: Path, build: Path, defines: List[str]) -> subprocess.CompletedProcess:
    """Configures and builds `source` in `build` (Release; Ninja when there is one)."""
    cmd = ["cmake", "-S", str(source), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", *defines]
    if shutil.which("ninja"):
        cmd += ["-G", "Ninja"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        return r
    return subprocess.run(["cmake", "--build", str(build), "-j", JOBS], capture_output=True,
                          text=True)


def load_into(runtime: str, library: str) -> None:
    """Loads a stable-ABI library so that its ops are in torch.ops.

    "torch": torch's own stable ABI; libtorch_cpu is made global first, since a library built
    against the stable headers alone links no torch library and finds the C shim there.
    "opreg": opreg.load_library, with opreg.torch putting opreg's ops in torch.ops.
    """
    import torch

    if runtime == "torch":
        lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
        ctypes.CDLL(lib, mode=os.RTLD_GLOBAL | os.RTLD_NOLOAD)
        torch.ops.load_library(library)
    else:
        import opreg
        import opreg.torch  # noqa: F401 - puts opreg's ops in torch.ops

        opreg.load_library(library)


def run_checks(script: Path, runtime: str, library: Path) -> Dict[str, Any]:
    """Runs a check script (`--runtime R --library L`) in a fresh process; its last stdout line
    is the JSON it reports. Fails the calling test with the script's output if it fails."""
    r = subprocess.run([sys.executable, str(script), "--runtime", runtime, "--library",
                        str(library)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{script.name} --runtime {runtime} failed:\n{r.stdout}\n{r.stderr}"
    return json.loads(r.stdout.strip().splitlines()[-1])


def parse_check_args() -> argparse.Namespace:
    """A check script's command line (--runtime torch|opreg --library PATH), library loaded."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--runtime", choices=["torch", "opreg"], required=True)
    parser.add_argument("--library", required=True)
    args = parser.parse_args()
    load_into(args.runtime, args.library)
    return args
