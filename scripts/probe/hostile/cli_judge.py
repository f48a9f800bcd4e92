"""Judging a finished CLI run: the trace format's rules for `opreg plan` output (plan_model,
check_plan_output) and judge_cli() with its per-command judges."""
from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .model import CLI_TIMEOUT_S, Probe, _short, unclear_reason


class TraceInvalid(Exception):
    pass


def plan_model(trace: Any, alignment_opt: Optional[int] = None) -> Tuple[List[Tuple[int, int, int]], int]:
    """The buffers and alignment a trace means under docs/trace_format.md; raises TraceInvalid
    for a trace the format forbids."""
    if not isinstance(trace, dict):
        raise TraceInvalid("top level is not an object")
    if "buffers" not in trace or not isinstance(trace["buffers"], list):
        raise TraceInvalid("no 'buffers' array")

    def integer(v: Any, what: str, lo: int, hi: int) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TraceInvalid(f"{what}={v!r} is not an integer")
        if not lo <= v <= hi:
            raise TraceInvalid(f"{what}={v} outside [{lo}, {hi}]")
        return v

    align = trace.get("alignment", 64)
    align = integer(align, "alignment", 1, 2**63 - 1) if alignment_opt is None else alignment_opt
    bufs = []
    for b in trace["buffers"]:
        if isinstance(b, dict):
            if not all(k in b for k in ("size", "first", "last")):
                raise TraceInvalid("buffer object without size/first/last")
            size, first, last = b["size"], b["first"], b["last"]
        elif isinstance(b, list):
            if len(b) != 3:
                raise TraceInvalid(f"buffer array of length {len(b)}")
            size, first, last = b
        else:
            raise TraceInvalid(f"buffer entry {b!r}")
        size = integer(size, "size", 0, 2**56)
        first = integer(first, "first", 0, 2**31 - 2)
        last = integer(last, "last", 0, 2**31 - 2)
        if first > last:
            raise TraceInvalid(f"first {first} > last {last}")
        bufs.append((size, first, last))
    if sum(s for s, _, _ in bufs) > 2**60:
        raise TraceInvalid("sizes add up to more than 2^60")
    return bufs, align


def check_plan_output(stdout: str, trace: Any, alignment_opt: Optional[int]) -> Tuple[str, str]:
    """Checks an accepted `opreg plan --json --offsets` run against the trace: every offset
    aligned, no two buffers live at the same step overlapping in memory, arena and lower bound
    as the format defines them."""
    try:
        bufs, align = plan_model(trace, alignment_opt)
    except TraceInvalid as e:
        return "wrong", f"accepted a trace the format forbids: {e}"
    try:
        res = json.loads(stdout)
    except ValueError:
        return "wrong", f"output is not JSON: {_short(stdout, 200)}"
    offs = res.get("offsets")
    if not isinstance(offs, list) or len(offs) != len(bufs):
        return "wrong", f"{len(offs) if isinstance(offs, list) else offs!r} offsets for {len(bufs)} buffers"
    if res.get("buffers") != len(bufs):
        return "wrong", f"reports {res.get('buffers')} buffers, the trace has {len(bufs)}"
    if res.get("naive_bytes") != sum(s for s, _, _ in bufs):
        return "wrong", f"naive_bytes {res.get('naive_bytes')} != sum of sizes {sum(s for s, _, _ in bufs)}"
    rounded = [-(-s // align) * align for s, _, _ in bufs]
    for i, off in enumerate(offs):
        if not isinstance(off, int) or off < 0 or off % align:
            return "wrong", f"buffer {i}: offset {off!r} not a multiple of {align}"
        if bufs[i][0] and off + bufs[i][0] > res.get("arena_bytes", 0):
            return "wrong", f"buffer {i} ends at {off + bufs[i][0]}, past the arena {res.get('arena_bytes')}"
    events: Dict[int, List[int]] = {}
    for i, (s, f, l) in enumerate(bufs):
        if s:
            events.setdefault(f, []).append(i)
    live: List[int] = []
    lb = 0
    for step in sorted(set(events) | {l for _, _, l in bufs}):
        live = [i for i in live if bufs[i][2] >= step] + events.get(step, [])
        lb = max(lb, sum(rounded[i] for i in live))
        spans = sorted((offs[i], offs[i] + bufs[i][0], i) for i in live)
        for (a0, a1, ia), (b0, b1, ib) in zip(spans, spans[1:]):
            if b0 < a1:
                return "wrong", f"buffers {ia} and {ib} are live at step {step} and overlap in memory"
    if res.get("lb_bytes") != lb:
        return "wrong", f"lb_bytes {res.get('lb_bytes')}, the trace's max live bytes are {lb}"
    if res.get("arena_bytes", -1) < lb:
        return "wrong", f"arena {res.get('arena_bytes')} below the lower bound {lb}"
    return "ok", ""


def _cli_plan_trace(p: Probe) -> Tuple[Any, Optional[int]]:
    """The trace a plan probe reads (None: unreadable / not JSON) and its --alignment."""
    path = p.argv[-1]
    align = None
    if "--alignment" in p.argv:
        try:
            align = int(p.argv[p.argv.index("--alignment") + 1])
        except (ValueError, IndexError):
            align = None
    if path == "-":
        data = p.stdin or b""
    else:
        try:
            st = os.stat(path)
            if not stat.S_ISREG(st.st_mode):
                return None, align
            data = Path(path).read_bytes()
        except OSError:
            return None, align
    try:
        return json.loads(data.decode("utf-8-sig")), align  # JSON allows ignoring a BOM
    except (ValueError, UnicodeDecodeError, RecursionError):
        return "unparsable", align


def judge_cli(p: Probe, rc: int, stdout: str, stderr: str, canon: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
    """Classifies a finished CLI run (rc >= 0)."""
    msg = (stderr.strip() or stdout.strip())
    if p.cli_check.startswith("schema:"):
        return judge_schema_cli(p, rc, stdout, stderr, canon.get(int(p.cli_check.split(":")[1]), {}))
    if rc != 0:
        if not msg:
            return {"outcome": "wrong", "detail": f"exit {rc} with no message"}
        return {"outcome": "refused", "message": f"exit {rc}: {msg}",
                "unclear": unclear_reason(msg, p.op_tokens, p.arg_tokens)}
    if "--capacity" in p.argv and p.cli_check == "plan":
        return judge_capacity(p, stdout)
    if p.cli_check in ("plan", "plan-budget"):
        trace, align = _cli_plan_trace(p)
        if trace is None:
            return {"outcome": "wrong", "detail": "accepted input that is not a readable regular file"}
        if trace == "unparsable":
            return {"outcome": "wrong", "detail": "accepted input that is not valid JSON (UTF-8)"}
        if p.cli_check == "plan-budget":
            stdout = stdout.strip().splitlines()[0] if stdout.strip() else stdout
        outcome, detail = check_plan_output(stdout, trace, align)
        return {"outcome": outcome, "detail": detail}
    if p.cli_check == "ops-name":
        ok = stdout.startswith("plugin::identity(")
        return {"outcome": "ok" if ok else "wrong", "detail": "" if ok else f"dump lacks the schema: {_short(stdout, 200)}"}
    if p.cli_check == "ops-list":
        ok = "plugin::identity" in stdout.split()
        return {"outcome": "ok" if ok else "wrong", "detail": "" if ok else f"list lacks plugin::identity: {_short(stdout, 200)}"}
    if p.cli_check == "schema-any":
        return judge_schema_roundtrip(p, stdout)
    if p.cli_check == "ops-load":
        return {"outcome": "wrong", "detail": f"loaded a non-library: {_short(stdout, 200)}"}
    if p.cli_check == "schema-many":
        lines = stdout.splitlines()
        ok = len(lines) == 20000 and set(lines) == {"f(Tensor x) -> Tensor"}
        return {"outcome": "ok" if ok else "wrong", "detail": "" if ok else f"{len(lines)} lines out"}
    if p.cli_check == "schema-file":
        return {"outcome": "wrong", "detail": f"accepted a non-file: {_short(stdout, 200)}"}
    return {"outcome": "ok-unchecked", "detail": f"exit 0: {_short(stdout, 120)}"}


def judge_schema_roundtrip(p: Probe, stdout: str) -> Dict[str, Any]:
    """An accepted `opreg schema` run: its output, read back by `opreg schema`, comes out
    unchanged, one line per input line."""
    n_in = len((p.stdin or b"").decode("utf-8", "replace").splitlines())
    lines = stdout.splitlines()
    if len(lines) != n_in:
        return {"outcome": "wrong", "detail": f"{len(lines)} output lines for {n_in} input line(s): {_short(stdout, 160)}"}
    again = subprocess.run([p.argv[0], "schema"], input=stdout.encode(), capture_output=True, timeout=CLI_TIMEOUT_S)
    if again.returncode != 0 or again.stdout.decode("utf-8", "replace") != stdout:
        return {"outcome": "wrong", "detail": f"output does not read back: {_short(again.stdout.decode('utf-8', 'replace'), 160)}"}
    return {"outcome": "ok", "detail": ""}


def judge_capacity(p: Probe, stdout: str) -> Dict[str, Any]:
    """`plan --budget-ms N --capacity B` that exited 0: it found a placement within B."""
    try:
        res = json.loads(stdout)
        asked = int(p.argv[p.argv.index("--capacity") + 1])
    except (ValueError, IndexError):
        return {"outcome": "wrong", "detail": f"output is not JSON: {_short(stdout, 200)}"}
    if res.get("outcome") != "found" or not 0 <= res.get("arena_bytes", -1) <= asked:
        return {"outcome": "wrong", "detail": f"exit 0 with {_short(stdout, 200)}"}
    note = "" if res.get("capacity") == asked else f"(reports capacity {res.get('capacity')}, asked {asked})"
    return {"outcome": "ok", "detail": note}


def judge_schema_cli(p: Probe, rc: int, stdout: str, stderr: str, canon: Dict[str, Any]) -> Dict[str, Any]:
    """`opreg schema` on one hostile text: every output line is a canonical schema or an
    'error: col N: ...' line, the exit status says whether any failed, and an accepted schema
    matches torch's canonical form (when torch parses it) and opreg's own Python parser."""
    lines = stdout.splitlines()
    errors = [ln for ln in lines if ln.startswith("error:")]
    if rc not in (0, 1):
        return {"outcome": "wrong", "detail": f"exit {rc}: {_short(stderr or stdout, 200)}"}
    if rc == 1 and not errors:
        return {"outcome": "wrong", "detail": f"exit 1 without an error line: {_short(stdout + stderr, 200)}"}
    if rc == 0 and errors:
        return {"outcome": "wrong", "detail": "error lines but exit 0"}
    if rc == 1:
        msg = " | ".join(errors)
        return {"outcome": "refused", "message": msg, "unclear": unclear_reason(msg, ("col",), ())}
    accepted = [ln for ln in lines if ln.strip()]
    if not accepted and not (p.stdin or b"").strip():
        return {"outcome": "ok", "detail": "blank input, no output"}
    if len(accepted) != 1:
        return {"outcome": "ok-unchecked", "detail": f"{len(accepted)} output lines for a multi-line text"}
    out = accepted[0]
    ref = canon.get("torch")
    py = canon.get("opreg")
    if py is not None and py != out:
        return {"outcome": "wrong", "detail": f"CLI canonical {_short(out, 150)!r} != Python's {_short(py, 150)!r}"}
    if ref is None and out == (p.stdin or b"").decode("utf-8", "replace").strip():
        return {"outcome": "ok", "detail": "the text was canonical already and came back unchanged"}
    if ref is None:
        return {"outcome": "ok-unchecked", "detail": "torch's parser not run on this text"}
    if ref.startswith("torch rejects"):
        return {"outcome": "ok-unchecked", "detail": f"opreg accepts, {ref}"}
    return ({"outcome": "ok", "detail": ""} if ref == out else
            {"outcome": "wrong", "detail": f"canonical {_short(out, 150)!r} != torch's {_short(ref, 150)!r}"})
