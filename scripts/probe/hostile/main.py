"""The command line: runs the worker's Python probes and the CLI probes, prints the report and
writes the JSON (see hostile_inputs.py for the options and exit status)."""
from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from .cli_probes import find_cli, gen_cli_probes
from .cli_run import run_cli_probe, schema_canon_via_worker
from .model import (CLI_TIMEOUT_S, FAILURES, OUTCOMES, PY_TIMEOUT_S, QUICK_TARGET, REPRO_PREAMBLE,
                    Probe, Result, _short, known_limitation)
from .report import print_report, select_quick
from .worker import Worker, worker_main

DESCRIPTION = "Hostile-input probe run over opreg's Python and CLI surfaces."


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=DESCRIPTION)
    ap.add_argument("--quick", action="store_true", help=f"about {QUICK_TARGET} representative probes")
    ap.add_argument("--json", metavar="PATH", help="write every result here")
    ap.add_argument("--cli", metavar="PATH", help="the opreg CLI binary (default: see the module doc)")
    ap.add_argument("--timeout", type=float, default=PY_TIMEOUT_S, help="seconds per Python probe")
    ap.add_argument("--cli-timeout", type=float, default=CLI_TIMEOUT_S, help="seconds per CLI probe")
    ap.add_argument("--no-torch", action="store_true", help="skip the torch probes")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI probes")
    ap.add_argument("--only", metavar="SUBSTRING", help="run only probes whose id contains this")
    ap.add_argument("--list", action="store_true", help="list the probes and exit")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main(not args.no_torch)

    t0 = time.monotonic()
    notes: List[str] = []
    tmp = Path(tempfile.mkdtemp(prefix="opreg_hostile_"))
    worker = Worker(args, tmp / "worker.log")
    results: List[Result] = []
    try:
        worker.start()
        if worker.torch_note:
            notes.append(f"torch probes skipped: {worker.torch_note}")
        py = worker.listing
        cli_probes: List[Probe] = []
        if args.no_cli:
            notes.append("CLI probes skipped: --no-cli")
        else:
            cli, why = find_cli(args.cli)
            if cli is None:
                notes.append(f"CLI probes skipped: {why}")
            else:
                notes.append(f"CLI: {cli} (from {why})")
                cli_probes = gen_cli_probes(cli, tmp)
        listing = py + [{"id": p.id, "surface": p.surface, "key": p.key, "repro": p.repro()} for p in cli_probes]
        if args.only:
            listing = [p for p in listing if args.only in p["id"]]
        if args.quick:
            listing = select_quick(listing, QUICK_TARGET)
        if args.list:
            for p in listing:
                print(f"{p['id']}\t{_short(p['repro'], 300)}")
            print(f"{len(listing)} probes", file=sys.stderr)
            return 0
        cli_by_id = {p.id: p for p in cli_probes}
        canon = schema_canon_via_worker(not args.no_torch) if any(p["id"].startswith("cli:schema/") for p in listing) else {}
        for n, item in enumerate(listing, 1):
            pid = item["id"]
            start = time.monotonic()
            if pid in cli_by_id:
                res = run_cli_probe(cli_by_id[pid], args.cli_timeout, canon, tmp)
            else:
                res = worker.run(pid, args.timeout)
            outcome, detail = res["outcome"], res.get("detail", "")
            if outcome == "wrong" and known_limitation(pid):
                outcome, detail = "known", f"{known_limitation(pid)}: {detail}"
            r = Result(id=pid, surface=item["surface"], outcome=outcome, detail=detail,
                       message=res.get("message", ""),
                       unclear=res.get("unclear", "") if res["outcome"] == "refused" else "",
                       note=res.get("note", ""),
                       repro=item["repro"], seconds=round(res.get("seconds", time.monotonic() - start), 4))
            results.append(r)
            if r.outcome in FAILURES:
                print(f"[{n}/{len(listing)}] {r.outcome.upper()} {pid}: {_short(r.detail, 200)}", file=sys.stderr)
        if worker.starts > 1:
            notes.append(f"the worker was started {worker.starts} times (once + once per crash/hang)")
    finally:
        worker.close()
    elapsed = time.monotonic() - t0
    print_report(results, notes, elapsed)
    if args.json:
        counts: Dict[str, Dict[str, int]] = {}
        for r in results:
            c = counts.setdefault(r.surface, {k: 0 for k in OUTCOMES + ("unclear",)})
            c[r.outcome] += 1
            c["unclear"] += bool(r.unclear)
        total = {k: sum(c[k] for c in counts.values()) for k in OUTCOMES + ("unclear",)}
        Path(args.json).write_text(json.dumps({
            "counts": counts, "total": total, "probes": len(results), "seconds": round(elapsed, 1),
            "quick": args.quick, "notes": notes, "repro_preamble": REPRO_PREAMBLE,
            "results": [dataclasses.asdict(r) for r in results]}, indent=1))
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if any(r.outcome in FAILURES for r in results) else 0
