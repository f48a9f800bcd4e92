"""The hostile-input probe run (scripts/probe/hostile_inputs.py --quick) finds no crash, no hang
and no silently wrong result over opreg's Python and CLI surfaces.

The probes run in subprocesses (a crash must not take pytest down). Without torch the NumPy,
opreg-tensor and CLI probes still run; without an opreg CLI ($OPREG_CLI, `opreg` on PATH, or
build/release/cli/opreg) the CLI probes are skipped. Either reason is printed (pytest -s, or in
the output of a failure)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "probe" / "hostile_inputs.py"
FAILURES = ("crash", "hang", "wrong")


def find_cli():
    """(path, None) of the opreg CLI, or (None, why there is none)."""
    env = os.environ.get("OPREG_CLI")
    if env:
        if os.path.isfile(env) and os.access(env, os.X_OK):
            return env, None
        return None, f"OPREG_CLI={env!r} is not an executable file"
    on_path = shutil.which("opreg")
    if on_path:
        return on_path, None
    built = REPO / "build" / "release" / "cli" / "opreg"
    if built.is_file() and os.access(built, os.X_OK):
        return str(built), None
    return None, f"no opreg CLI (OPREG_CLI unset, none on PATH, no {built})"


def test_hostile_inputs_quick_run_has_no_crash_hang_or_wrong_result(tmp_path):
    pytest.importorskip("numpy", reason="the probes build their inputs with NumPy")
    out = tmp_path / "probe.json"
    cmd = [sys.executable, str(SCRIPT), "--quick", "--json", str(out)]
    try:
        import torch  # noqa: F401
    except ImportError:
        print("hostile-input probe: torch probes skipped: torch is not installed")
        cmd.append("--no-torch")
    cli, why = find_cli()
    if cli is None:
        print(f"hostile-input probe: CLI probes skipped: {why}")
        cmd.append("--no-cli")
    else:
        cmd += ["--cli", cli]
    # Each probe has its own timeout inside the script (a hang is a finding, not a stall here);
    # this outer one only guards against the harness itself stalling.
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=1800)
    print(proc.stdout)
    assert out.is_file(), f"the probe run wrote no JSON (exit {proc.returncode}):\n{proc.stderr[-4000:]}"
    data = json.loads(out.read_text())
    for note in data["notes"]:
        print(f"note: {note}")
    assert data["probes"] > 0, "no probe ran"
    failed = [r for r in data["results"] if r["outcome"] in FAILURES]
    listing = "\n".join(f"{r['outcome'].upper()} {r['id']}: {r['detail']}\n    repro: {r['repro']}"
                        for r in failed)
    totals = data["total"]
    assert not failed, (f"crashes {totals['crash']}, hangs {totals['hang']}, wrong {totals['wrong']} "
                        f"(repro lines run after: {data['repro_preamble']}):\n{listing}")
    assert proc.returncode == 0, proc.stderr[-4000:]
