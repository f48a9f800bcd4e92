"""The --quick selection and the printed report."""
from __future__ import annotations

from typing import Any, Dict, List

from .model import FAILURES, OUTCOMES, REPRO_PREAMBLE, Result, _short


def select_quick(probes: List[Dict[str, Any]], target: int) -> List[Dict[str, Any]]:
    """A representative subset of about `target` probes: one key probe per (surface, variant)
    (an op's variant stands for the same variant of the other ops), then an even sample of
    the rest."""
    chosen: List[str] = []
    groups = set()
    for p in probes:
        if p["key"]:
            group = (p["surface"], p["id"].rsplit("/", 1)[-1])
            if group not in groups:
                groups.add(group)
                chosen.append(p["id"])
    rest = [p["id"] for p in probes if p["id"] not in set(chosen)]
    room = max(target - len(chosen), 0)
    if room:
        step = len(rest) / room
        chosen += [rest[int(i * step)] for i in range(min(room, len(rest)))]
    keep = set(chosen)
    return [p for p in probes if p["id"] in keep]


def print_report(results: List[Result], notes: List[str], elapsed: float) -> None:
    surfaces = sorted({r.surface for r in results}, key=lambda s: [r.surface for r in results].index(s))
    cols = list(OUTCOMES) + ["unclear"]
    width = max(len(s) for s in surfaces + ["surface", "total"]) + 2
    head = "surface".ljust(width) + "".join(c.rjust(13) for c in cols) + "total".rjust(8)
    print(head)
    print("-" * len(head))
    totals = {c: 0 for c in cols}
    for s in surfaces:
        rs = [r for r in results if r.surface == s]
        row = {c: sum(r.outcome == c for r in rs) for c in OUTCOMES}
        row["unclear"] = sum(bool(r.unclear) for r in rs)
        for c in cols:
            totals[c] += row[c]
        print(s.ljust(width) + "".join(str(row[c]).rjust(13) for c in cols) + str(len(rs)).rjust(8))
    print("-" * len(head))
    print("total".ljust(width) + "".join(str(totals[c]).rjust(13) for c in cols) + str(len(results)).rjust(8))
    print(f"\n{len(results)} probes in {elapsed:.1f} s; crashes {totals['crash']}, hangs {totals['hang']}, "
          f"silently wrong {totals['wrong']}; known limitations {totals['known']}; "
          f"ok-unchecked {totals['ok-unchecked']}; unclear {totals['unclear']}")
    for n in notes:
        print(f"note: {n}")
    print(f"\nrepro lines run after: {REPRO_PREAMBLE}")
    for title, pick in (("CRASH", lambda r: r.outcome == "crash"), ("HANG", lambda r: r.outcome == "hang"),
                        ("WRONG", lambda r: r.outcome == "wrong"),
                        ("KNOWN, documented limitation (not counted as wrong)",
                         lambda r: r.outcome == "known"),
                        ("PROBE-ERROR (harness)", lambda r: r.outcome == "probe-error"),
                        ("LARGE MEMORY (not counted as a failure)", lambda r: bool(r.note) and r.outcome not in FAILURES),
                        ("UNCLEAR refusal messages", lambda r: bool(r.unclear))):
        chosen = [r for r in results if pick(r)]
        if not chosen:
            continue
        print(f"\n== {title} ({len(chosen)}) ==")
        for r in chosen:
            why = r.note if title.startswith("LARGE") else (r.detail or r.unclear)
            print(f"- {r.id}: {_short(why, 400)}" + (f" [{r.note}]" if r.note and not title.startswith("LARGE") else ""))
            if r.unclear:
                print(f"    message: {_short(r.message, 300)}")
            print(f"    repro: {r.repro}")
