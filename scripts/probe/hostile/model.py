"""Probes and results: Probe (one hostile input and how to judge it), Result (its outcome),
Gen (collects probes under unique ids), unclear_reason() (why a refusal message is unclear),
and the run's constants (timeouts, memory limits, outcome names, the repro preamble)."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

PROBE_DIR = Path(__file__).resolve().parents[1]  # scripts/probe
ENTRY_SCRIPT = PROBE_DIR / "hostile_inputs.py"    # the command line (and the worker's)
REPO_ROOT = PROBE_DIR.parents[1]
PY_TIMEOUT_S = 10.0       # per Python probe
CLI_TIMEOUT_S = 5.0       # per CLI probe
WORKER_START_TIMEOUT_S = 120.0
WORKER_MEMORY = 12 << 30  # address-space limit of the worker (torch maps a few GiB by itself)
CLI_MEMORY = 2 << 30      # address-space limit of each CLI run
QUICK_TARGET = 150
FAILURES = ("crash", "hang", "wrong")
OUTCOMES = ("refused", "ok", "ok-unchecked", "known", "wrong", "crash", "hang", "not-run",
            "probe-error")

# Documented limitations: a probe whose id matches and whose result is wrong is reported as
# "known" (listed with the reason, not counted as silently wrong). Each entry names where the
# limitation is documented; keep this list short and honest.
KNOWN_LIMITATIONS = (
    (re.compile(r"^ops:torch/[^/]+/neg-view(-\w+)?$"),
     "a read input made by torch's private torch._neg_view() over aligned memory is read "
     "un-negated by opreg.ops (asking torch costs ~150 ns per tensor; the public API's negated "
     "views, z.conj().imag, and every negated written argument are refused; docs/security.md)"),
)


def known_limitation(probe_id: str) -> str:
    """The documented limitation `probe_id` falls under, or ""."""
    for pattern, reason in KNOWN_LIMITATIONS:
        if pattern.match(probe_id):
            return reason
    return ""
MSG_LIMIT = 600           # characters of a message kept in the report

REPRO_PREAMBLE = ('import sys; sys.path.insert(0, "scripts/probe"); import hostile_inputs as h; '
                  'h.load_frameworks(); from hostile_inputs import *')


@dataclasses.dataclass
class Probe:
    """One hostile input. Python probes are source text run in the worker: `setup` (statements)
    then `call` (an expression). Op probes (`op` set) give their arguments separately so that
    they can be snapshotted before the call and checked against a reference after it."""

    id: str
    surface: str
    key: bool = False                   # always part of --quick
    setup: str = ""
    call: str = ""
    op: str = ""                        # a built-in op of namespace opreg
    overload: str = "default"           # "default" or "out"
    target: str = ""                    # the callable, e.g. "o.add.out"
    args: Tuple[str, ...] = ()
    kwargs: Tuple[Tuple[str, str], ...] = ()
    must_refuse: str = ""               # accepted anyway -> wrong
    expect: str = ""                    # API probes: an expression over `r` (see run_api_probe)
    op_tokens: Tuple[str, ...] = ()     # a clear refusal names one of these ...
    arg_tokens: Tuple[str, ...] = ()    # ... and one of these (words)
    # CLI probes
    argv: Tuple[str, ...] = ()
    stdin: Optional[bytes] = None
    cli_check: str = ""                 # name of the checker of an accepted run

    @property
    def is_cli(self) -> bool:
        return bool(self.argv)

    def call_text(self) -> str:
        if self.call:
            return self.call
        parts = list(self.args) + [f"{k}={v}" for k, v in self.kwargs]
        return f"{self.target}({', '.join(parts)})"

    def repro(self) -> str:
        if self.is_cli:
            cmd = " ".join(_shell_quote(a) for a in self.argv)
            if self.stdin is not None:
                shown = self.stdin[:120]
                more = f" (+{len(self.stdin) - 120} bytes)" if len(self.stdin) > 120 else ""
                return f"printf %s {_shell_quote(shown.decode('latin-1'))}{more} | {cmd}"
            return cmd
        text = f"{self.setup}; {self.call_text()}" if self.setup else self.call_text()
        return text if len(text) <= 400 else text[:400] + f"... ({len(text)} chars)"


@dataclasses.dataclass
class Result:
    id: str
    surface: str
    outcome: str
    detail: str = ""
    message: str = ""
    unclear: str = ""   # why the refusal message is unclear ("" = clear or not a refusal)
    note: str = ""      # e.g. a CLI run's peak memory when it is large
    repro: str = ""
    seconds: float = 0.0


def _shell_quote(s: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./=:,+-]+", s):
        return s
    return "'" + s.replace("'", "'\\''") + "'"


def _short(text: str, limit: int = MSG_LIMIT) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


EXPECTATION_WORDS = (
    "expect", "must", "should", "require", "support", "only", "allowed", "valid", "in [",
    "range", "cannot", "can't", "not a ", "no such", "unknown", "overflow", "too ", "exceed",
    "at most", "at least", "does not", "doesn't", "missing", "not found", "is not", "got",
    "not defined", "already", "has no", "no op", "unexpected", "duplicate", "unsupported",
    "forbidden", "negative", "not allowed", "needs", "lazily", "timed out", "timeout",
    "takes", "overlap", "mismatch", "more than", " after ", "follows", "could not", "unterminated",
    "no group", "wrong", "not in [", "callable", "out of memory", "invalid", "not find",
    "empty group", "a trace is", "built without", "not specified", "failed:",
)
# Allocation failures name no single argument: for them the op and the size are enough.
ALLOCATION_WORDS = ("out of memory", "overflow the byte count", "more than 2^63 elements")


def unclear_reason(message: str, op_tokens: Sequence[str], arg_tokens: Sequence[str]) -> str:
    """Why a refusal message fails "names the op, the argument and what was expected"; ""
    when it does not fail."""
    m = message.lower()
    if op_tokens and not any(t.lower() in m for t in op_tokens):
        return "does not name the op/input (" + " | ".join(op_tokens) + ")"
    if arg_tokens and not any(w in m for w in ALLOCATION_WORDS) and not any(re.search(r"(?<![A-Za-z0-9_])" + re.escape(t.lower()) + r"(?![A-Za-z0-9_])", m)
                              for t in arg_tokens):
        return "does not name the argument (" + " | ".join(arg_tokens) + ")"
    if not any(w in m for w in EXPECTATION_WORDS):
        return "does not say what was expected"
    return ""


class Gen:
    """Collects probes with unique ids."""

    def __init__(self) -> None:
        self.probes: List[Probe] = []
        self._ids: Dict[str, int] = {}

    def add(self, p: Probe) -> None:
        n = self._ids.get(p.id, 0)
        self._ids[p.id] = n + 1
        if n:
            p = dataclasses.replace(p, id=f"{p.id}~{n}")
        self.probes.append(p)
