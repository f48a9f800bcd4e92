"""Running one CLI probe (under an address-space limit and a timeout, with its peak memory) and
the schema reference table the `opreg schema` probes are judged against."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Optional

from . import frameworks
from .cli_judge import judge_cli
from .model import CLI_MEMORY, PROBE_DIR, REPO_ROOT, WORKER_MEMORY, Probe, _short
from .schemas import SCHEMA_TEXTS


BIG_RSS_KB = 256 * 1024  # a CLI run above this on a small or streamed input gets a note


def run_cli_probe(p: Probe, timeout: float, canon: Dict[int, Dict[str, Any]], tmp: Path) -> Dict[str, Any]:
    """Runs one CLI probe under an address-space limit and a timeout; reaps it with wait4 so
    that its peak memory is known."""
    shell = f'ulimit -v {CLI_MEMORY // 1024} 2>/dev/null; exec "$0" "$@"'
    argv = ["/bin/sh", "-c", shell, *p.argv]
    files = {name: open(tmp / f"cli.{name}", "w+b") for name in ("in", "out", "err")}
    try:
        files["in"].write(p.stdin or b"")
        files["in"].flush()
        files["in"].seek(0)
        t0 = time.monotonic()
        try:
            proc = subprocess.Popen(argv, stdin=files["in"] if p.stdin is not None else subprocess.DEVNULL,
                                    stdout=files["out"], stderr=files["err"], start_new_session=True)
        except OSError as e:
            return {"outcome": "not-run", "detail": f"could not start the CLI: {e}"}
        reaped: Dict[str, Any] = {}
        waiter = threading.Thread(target=lambda: reaped.update(zip(("pid", "status", "rusage"), os.wait4(proc.pid, 0))))
        waiter.start()
        waiter.join(timeout)
        if waiter.is_alive():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            waiter.join()
            proc.returncode = -9
            return {"outcome": "hang", "detail": f"no exit in {timeout:g} s", "seconds": time.monotonic() - t0}
        secs = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(reaped["status"])
        out, err = (files[n].seek(0) or files[n].read().decode("utf-8", "replace") for n in ("out", "err"))
    finally:
        for f in files.values():
            f.close()
    rss_kb = reaped["rusage"].ru_maxrss
    note = ""
    if rss_kb > BIG_RSS_KB and len(p.stdin or b"") < 64 << 20:
        note = (f"peak memory {rss_kb // 1024} MiB (bounded here only by the harness's "
                f"{CLI_MEMORY >> 30} GiB address-space limit)")
    if proc.returncode < 0:
        try:
            sig = signal.Signals(-proc.returncode).name
        except ValueError:
            sig = f"signal {-proc.returncode}"
        return {"outcome": "crash", "detail": f"killed by {sig}; stderr: {_short(err.strip(), 300)}",
                "seconds": secs, "note": note}
    res = judge_cli(p, proc.returncode, out, err, canon)
    res["seconds"] = secs
    res["note"] = note
    if "message" in res:
        res["message"] = _short(res["message"], 4000)
    return res


def schema_canon_table() -> Dict[int, Dict[str, Optional[str]]]:
    """For each hostile schema text that is safe to hand to torch's recursive parser: torch's
    canonical form (str(parse_schema(text)), or "torch rejects: ...") and opreg's, as opreg's
    Python front end prints it (None when opreg refuses it). Run in a child process."""
    torch, opreg = frameworks.torch, frameworks.opreg
    table: Dict[int, Dict[str, Optional[str]]] = {}
    for i, t in enumerate(SCHEMA_TEXTS):
        if len(t) > 4000 or t.count("(") + t.count("[") > 64 or "\0" in t or "\n" in t:
            continue
        entry: Dict[str, Optional[str]] = {"torch": None, "opreg": None}
        if torch is not None:
            try:
                entry["torch"] = str(torch._C.parse_schema(t))
            except Exception as e:
                entry["torch"] = "torch rejects: " + _short(str(e).splitlines()[0] if str(e) else "", 120)
        has_ns = "::" in t.split("(")[0]
        try:
            name = opreg.Library(f"canon{i}", "FRAGMENT").define(t)
            canon = str(opreg.schema(f"canon{i}::{name}"))
            entry["opreg"] = canon if has_ns else canon.split("::", 1)[1]
        except Exception:
            pass
        table[i] = entry
    return table


def schema_canon_via_worker(with_torch: bool) -> Dict[int, Dict[str, Any]]:
    """schema_canon_table() computed in a child process (a crash there costs only the
    reference, which the CLI schema probes then lack)."""
    code = ("import json, sys; sys.path.insert(0, %r); from hostile import cli_run, frameworks; "
            "frameworks.load_frameworks(%r); print(json.dumps(cli_run.schema_canon_table()))"
            % (str(PROBE_DIR), with_torch))
    shell = f'ulimit -v {WORKER_MEMORY // 1024} 2>/dev/null; exec "$0" "$@"'
    try:
        r = subprocess.run(["/bin/sh", "-c", shell, sys.executable, "-c", code], capture_output=True,
                           timeout=120, cwd=str(REPO_ROOT))
        data = json.loads(r.stdout.decode().strip().splitlines()[-1])
        return {int(k): v for k, v in data.items()}
    except Exception:
        return {}
