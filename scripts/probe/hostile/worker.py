"""The worker: a subprocess (hostile_inputs.py --worker) that runs Python probes by id, and its
client in the parent, which restarts it after a crash or a hang."""
from __future__ import annotations

import argparse
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import checkers, frameworks, inputs, schemas
from .gen_api import python_probes
from .model import ENTRY_SCRIPT, REPO_ROOT, WORKER_MEMORY, WORKER_START_TIMEOUT_S, _short
from .run_python import run_api_probe, run_op_probe


def _limit_memory(nbytes: int) -> None:
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    except (ImportError, ValueError, OSError):
        pass


def worker_main(with_torch: bool) -> int:
    """Reads requests (JSON lines) on stdin, answers on the original stdout; everything opreg,
    torch or a kernel prints goes to stderr."""
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _limit_memory(WORKER_MEMORY)
    if os.environ.get("HOSTILE_TMP"):
        tempfile.tempdir = os.environ["HOSTILE_TMP"]  # the files probes make go with the run
    torch_note = frameworks.load_frameworks(with_torch)
    probes = python_probes(frameworks.torch is not None)
    by_id = {p.id: p for p in probes}
    listing = [{"id": p.id, "surface": p.surface, "key": p.key, "repro": p.repro()} for p in probes]
    out.write(json.dumps({"listing": listing, "torch": torch_note}) + "\n")
    for line in sys.stdin:
        req = json.loads(line)
        p = by_id[req["id"]]
        ns = dict(WORKER_NAMESPACE())
        t0 = time.monotonic()
        try:
            res = run_op_probe(p, ns) if p.op else run_api_probe(p, ns)
        except Exception as e:  # a bug here, not in opreg
            res = {"outcome": "probe-error", "detail": f"{type(e).__name__}: {e}"}
        res["seconds"] = time.monotonic() - t0
        for k in ("message", "detail"):
            if k in res:
                res[k] = _short(str(res[k]), 4000)
        out.write(json.dumps(res) + "\n")
    return 0


# The names probe source text (setup, call, target, arguments, expect) may use, by module.
WORKER_NAMES = (
    (frameworks, ("np", "opreg", "o", "torch", "T")),
    (inputs, ("rnd", "trnd", "otnd", "ro", "misaligned", "nanify", "zcplx")),
    (checkers, ("chk_tensor", "chk_values", "chk_schema", "chk_custom", "chk_ctor", "chk_dtype_echo",
                "chk_full", "chk_arange", "chk_tensor_data", "chk_accepted", "sm_ok", "chk_library_ns")),
    (schemas, ("SCHEMA_TEXTS",)),
)


def WORKER_NAMESPACE() -> Dict[str, Any]:  # noqa: N802 - reads like the namespace it is
    """Read at each call: load_frameworks() sets opreg, o, torch and T."""
    return {n: getattr(module, n) for module, names in WORKER_NAMES for n in names}


class Worker:
    """The worker subprocess: restarted after a crash or a hang."""

    def __init__(self, args: argparse.Namespace, log_path: Path) -> None:
        self.args = args
        self.log_path = log_path
        self.proc: Optional[subprocess.Popen] = None
        self.lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.listing: List[Dict[str, Any]] = []
        self.torch_note = ""
        self.starts = 0
        self.log_offset = 0

    def start(self) -> None:
        cmd = [sys.executable, str(ENTRY_SCRIPT), "--worker"]
        if self.args.no_torch:
            cmd.append("--no-torch")
        work = self.log_path.parent / "work"
        work.mkdir(exist_ok=True)
        env = dict(os.environ, OMP_NUM_THREADS="2", PYTHONFAULTHANDLER="1", PYTHONUNBUFFERED="1",
                   HOSTILE_TMP=str(work))
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                     start_new_session=True, env=env, cwd=str(REPO_ROOT))
        log.close()
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()
        self.starts += 1
        first = self._get(WORKER_START_TIMEOUT_S)
        if not isinstance(first, dict) or "listing" not in first:
            raise RuntimeError(f"the probe worker did not start ({first!r}); see {self.log_path}")
        self.listing = first["listing"]
        self.torch_note = first["torch"]

    @staticmethod
    def _read(proc: subprocess.Popen, q: "queue.Queue[Optional[str]]") -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            q.put(raw.decode("utf-8", "replace"))
        q.put(None)

    def _get(self, timeout: float) -> Any:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return "timeout"
        if line is None:
            assert self.proc is not None
            try:
                rc = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                rc = None
            return ("died", rc)
        return json.loads(line)

    def run(self, probe_id: str, timeout: float) -> Dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        try:
            self.log_offset = self.log_path.stat().st_size
        except OSError:
            self.log_offset = 0
        try:
            self.proc.stdin.write((json.dumps({"id": probe_id}) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        ans = self._get(timeout)
        if isinstance(ans, dict):
            return ans
        if ans == "timeout":
            self.kill()
            return {"outcome": "hang", "detail": f"no answer in {timeout:g} s"}
        rc = ans[1]
        self.proc = None
        tail = self._log_tail()
        if rc is not None and rc < 0:
            try:
                sig = signal.Signals(-rc).name
            except ValueError:
                sig = f"signal {-rc}"
            return {"outcome": "crash", "detail": f"worker killed by {sig}; log: {tail}"}
        return {"outcome": "crash", "detail": f"worker exited with status {rc} without answering; log: {tail}"}

    def _log_tail(self) -> str:
        """What the dying worker printed during the probe: the fatal-error lines first."""
        try:
            data = self.log_path.read_bytes()[getattr(self, "log_offset", 0):].decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [ln.strip() for ln in data.splitlines() if ln.strip()]
        marks = ("Fatal Python error", "what():", "INTERNAL ASSERT", "terminate called", "Error:", "error:")
        picked = [ln for ln in lines if any(m in ln for m in marks)] or lines[-4:]
        return _short(" | ".join(dict.fromkeys(picked)), 700)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
        self.proc = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (subprocess.TimeoutExpired, BrokenPipeError, OSError):
                pass
        self.kill()
