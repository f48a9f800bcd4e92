"""CLI probes: where the opreg CLI is (find_cli) and the hostile runs of `opreg plan`,
`opreg schema` and `opreg ops --load` (gen_cli_probes)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

from .model import REPO_ROOT, Probe
from .schemas import HOSTILE_SCHEMAS


def find_cli(explicit: Optional[str]) -> Tuple[Optional[str], str]:
    """The opreg CLI: --cli, $OPREG_CLI, `opreg` on PATH, build/release/cli/opreg; with the
    reason when there is none."""
    for source, cand in (("--cli", explicit), ("$OPREG_CLI", os.environ.get("OPREG_CLI")),
                         ("PATH", shutil.which("opreg")),
                         ("build tree", str(REPO_ROOT / "build" / "release" / "cli" / "opreg"))):
        if not cand:
            continue
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand, source
        if source in ("--cli", "$OPREG_CLI"):
            return None, f"{source} names {cand!r}, which is not an executable file"
    return None, ("no opreg CLI: set OPREG_CLI, put `opreg` on PATH or build "
                  "build/release/cli/opreg")


def gen_cli_probes(cli: str, tmp: Path) -> List[Probe]:
    """Probes of `opreg plan`, `opreg schema` and `opreg ops --load`."""
    out: List[Probe] = []
    fifo = tmp / "fifo.json"
    os.mkfifo(fifo)
    d = tmp / "adir"
    d.mkdir()

    def plan(pid: str, text: Optional[bytes] = None, path: Optional[str] = None, opts: Sequence[str] = (),
             key: bool = False, check: str = "plan") -> None:
        if path is None:
            path = str(tmp / f"plan-{len(out)}.json")
            Path(path).write_bytes(text or b"")
        argv = (cli, "plan", "--json", "--offsets", *opts, path)
        out.append(Probe(id=f"cli:plan/{pid}", surface="cli:plan", key=key, argv=argv, cli_check=check,
                         op_tokens=(os.path.basename(path), "line", "column", "trace", "--", "option",
                                    "stdin"), arg_tokens=()))

    j = lambda obj: json.dumps(obj).encode()  # noqa: E731
    valid = {"alignment": 64, "buffers": [{"size": 1024, "first": 0, "last": 3}, [512, 1, 2], [2048, 3, 5]]}
    plan("valid", j(valid), key=True)
    import random
    rng = random.Random(7)
    big = {"buffers": [[rng.randrange(0, 1 << 20), s, s + rng.randrange(0, 20)] for s in
                       (rng.randrange(0, 2000) for _ in range(2000))]}
    plan("valid-2000-buffers", j(big), key=True)
    plan("valid-zero-sizes", j({"buffers": [[0, 0, 0], [0, 0, 5], [64, 1, 1]]}))
    plan("valid-alignment-1", j({"alignment": 1, "buffers": [[3, 0, 1], [5, 1, 2]]}))
    plan("valid-alignment-3", j({"alignment": 3, "buffers": [[4, 0, 1], [5, 1, 2]]}))
    plan("valid-max-size", j({"buffers": [[2**56, 0, 0]]}))
    plan("valid-max-step", j({"buffers": [[64, 2**31 - 2, 2**31 - 2]]}))
    plan("valid-array-entries", b'{"buffers": [[1, 0, 0]], "name": "x", "extra": {"a": [1, 2]}}')
    plan("empty-file", b"")
    plan("empty-object", b"{}", key=True)
    plan("buffers-number", b'{"buffers": 5}')
    plan("size-1e400", b'{"buffers": [{"size": 1e400, "first": 0, "last": 1}]}', key=True)
    plan("size-negative", b'{"buffers": [{"size": -1, "first": 0, "last": 1}]}', key=True)
    plan("size-2**56+1", j({"buffers": [[2**56 + 1, 0, 1]]}))
    plan("size-2**63", j({"buffers": [[2**63, 0, 1]]}))
    plan("size-2**64", j({"buffers": [[2**64, 0, 1]]}))
    plan("size-float", b'{"buffers": [[1.5, 0, 1]]}', key=True)
    plan("size-float-integral", b'{"buffers": [[64.0, 0, 1]]}')
    plan("size-exponent", b'{"buffers": [[1e3, 0, 1]]}')
    plan("size-string", b'{"buffers": [["10", 0, 1]]}')
    plan("size-null", b'{"buffers": [[null, 0, 1]]}')
    plan("size-true", b'{"buffers": [[true, 0, 1]]}')
    plan("first-gt-last", b'{"buffers": [[64, 5, 1]]}')
    plan("first-negative", b'{"buffers": [[64, -1, 1]]}')
    plan("last-2**31-1", j({"buffers": [[64, 0, 2**31 - 1]]}))
    plan("last-2**40", j({"buffers": [[64, 0, 2**40]]}))
    plan("sum-over-2**60", j({"buffers": [[2**56, i, i] for i in range(20)]}), key=True)
    plan("alignment-0", j({"alignment": 0, "buffers": [[64, 0, 1]]}), key=True)
    plan("alignment-negative", j({"alignment": -64, "buffers": [[64, 0, 1]]}))
    plan("alignment-2**62", j({"alignment": 2**62, "buffers": [[64, 0, 1], [64, 0, 1]]}), key=True)
    plan("alignment-2**40-many", j({"alignment": 2**40, "buffers": [[1, 0, 1]] * 20}))
    plan("alignment-1e400", b'{"alignment": 1e400, "buffers": [[64, 0, 1]]}')
    plan("alignment-string", b'{"alignment": "64", "buffers": [[64, 0, 1]]}')
    plan("nan-literal", b'{"buffers": [[NaN, 0, 1]]}')
    plan("infinity-literal", b'{"buffers": [[Infinity, 0, 1]]}')
    plan("deep-nesting-ignored-key", b'{"buffers": [], "x": ' + b"[" * 100000 + b"]" * 100000 + b"}", key=True)
    plan("deep-nesting-unbalanced", b"[" * 1000000)
    plan("deep-nesting-objects", b'{"a":' * 100000 + b"1" + b"}" * 100000)
    plan("huge-junk-array", b'{"buffers": [], "junk": [' + b"0," * 2000000 + b"0]}")
    plan("entry-string", b'{"buffers": ["abc"]}')
    plan("entry-short-array", b'{"buffers": [[64, 0]]}')
    plan("entry-long-array", b'{"buffers": [[64, 0, 1, 2]]}')
    plan("entry-nested-array", b'{"buffers": [[[64], 0, 1]]}')
    plan("entry-missing-last", b'{"buffers": [{"size": 64, "first": 0}]}')
    plan("non-utf8-name", b'{"name": "\xff\xfe", "buffers": [[64, 0, 1]]}', key=True)
    plan("non-utf8-raw", b"\xff\xfe\x00\x01" * 100)
    plan("control-chars-name", b'{"name": "a\\u0000b\\u001b[31m", "buffers": [[64, 0, 1]]}')
    plan("top-level-array", b"[[64, 0, 1]]")
    plan("top-level-null", b"null")
    plan("duplicate-keys", b'{"buffers": [[64, 0, 1]], "buffers": [[128, 0, 1], [64, 0, 0]]}')
    plan("bom", b"\xef\xbb\xbf" + j(valid))
    plan("trailing-garbage", j(valid) + b" xyz")
    plan("comment", b'{"buffers": [[64, 0, 1]] /* c */}')
    plan("directory", path=str(d), key=True)
    plan("missing-file", path=str(tmp / "no-such.json"))
    plan("fifo-no-writer", path=str(fifo), key=True, check="plan")
    plan("dev-zero", path="/dev/zero", key=True)
    plan("dev-null", path="/dev/null")
    plan("dev-urandom", path="/dev/urandom")
    plan("option-alignment-negative", j(valid), opts=("--alignment", "-1"))
    plan("option-alignment-zero", j(valid), opts=("--alignment", "0"))
    plan("option-alignment-2**64", j(valid), opts=("--alignment", str(2**64)), key=True)
    plan("option-alignment-text", j(valid), opts=("--alignment", "abc"))
    plan("option-alignment-trailing", j(valid), opts=("--alignment", "64abc"))
    plan("option-budget-negative", j(valid), opts=("--budget-ms", "-5"))
    plan("option-budget-1e30", j(valid), opts=("--budget-ms", "1e30"))
    plan("option-capacity-negative", j(valid), opts=("--budget-ms", "10", "--capacity", "-1"))
    plan("option-capacity-2**70", j(valid), opts=("--budget-ms", "10", "--capacity", str(2**70)))
    plan("option-unknown", j(valid), opts=("--bogus",))
    plan("option-missing-value", j(valid), opts=("--alignment",))
    plan("budget-on-big", j(big), opts=("--budget-ms", "200"), check="plan-budget")
    # stdin
    out.append(Probe(id="cli:plan/stdin-valid", surface="cli:plan", argv=(cli, "plan", "--json", "--offsets", "-"),
                     stdin=j(valid), cli_check="plan", op_tokens=("stdin", "-", "line")))
    out.append(Probe(id="cli:plan/stdin-empty", surface="cli:plan", argv=(cli, "plan", "--json", "--offsets", "-"),
                     stdin=b"", cli_check="plan", op_tokens=("stdin", "-", "line")))
    out.append(Probe(id="cli:plan/no-file", surface="cli:plan", argv=(cli, "plan"), cli_check="plan",
                     op_tokens=("usage", "trace", "plan")))
    out.append(Probe(id="cli:plan/two-files", surface="cli:plan", argv=(cli, "plan", str(tmp / "plan-0.json"), str(tmp / "plan-0.json")),
                     cli_check="none", op_tokens=("usage", "trace", "plan", "plan-0.json")))
    # opreg schema
    for i, (pid, text) in enumerate(HOSTILE_SCHEMAS):
        s = text.replace("{i}", str(i)).encode("utf-8", "surrogateescape") if "\xff" not in text \
            else text.replace("{i}", str(i)).encode("latin-1")
        key = pid in ("paren-nesting-1e5", "return-nesting-1e5", "dict-nesting-1e4", "list-default-nesting-1e5",
                      "long-name-1e6", "valid", "nul-in-name", "future-nesting")
        out.append(Probe(id=f"cli:schema/{pid}", surface="cli:schema", key=key, argv=(cli, "schema"),
                         stdin=s + b"\n", cli_check=f"schema:{i}", op_tokens=("col", "line", "schema"),
                         arg_tokens=()))
    for pid, path in (("directory", str(d)), ("fifo", str(fifo)), ("dev-zero", "/dev/zero"),
                      ("missing", str(tmp / "nope.txt"))):
        out.append(Probe(id=f"cli:schema/file-{pid}", surface="cli:schema", key=pid in ("fifo", "dev-zero"),
                         argv=(cli, "schema", path), cli_check="schema-file",
                         op_tokens=(os.path.basename(path), "line", "col"), arg_tokens=()))
    out.append(Probe(id="cli:schema/namespace-hostile", surface="cli:schema",
                     argv=(cli, "schema", "--namespace", "a::b\n("), stdin=b"f(Tensor x) -> Tensor\n",
                     cli_check="schema-any", op_tokens=("namespace",)))
    out.append(Probe(id="cli:schema/many-lines", surface="cli:schema", argv=(cli, "schema"),
                     stdin=b"f(Tensor x) -> Tensor\n" * 20000, cli_check="schema-many"))
    # opreg ops --load
    text = tmp / "text.so"
    text.write_text("hello")
    empty = tmp / "empty.so"
    empty.write_bytes(b"")
    trunc = tmp / "trunc.so"
    plugin = REPO_ROOT / "build" / "release" / "tests" / "cpp" / "libopreg_test_plugin.so"
    trunc.write_bytes(plugin.read_bytes()[:300] if plugin.exists() else b"\x7fELF")
    for pid, path, key in (("directory", str(d), True), ("text", str(text), False), ("empty", str(empty), False),
                           ("dev-zero", "/dev/zero", True), ("fifo", str(fifo), True),
                           ("missing", str(tmp / "nope.so"), False), ("truncated-elf", str(trunc), True),
                           ("executable", "/bin/true", False)):
        out.append(Probe(id=f"cli:ops/load-{pid}", surface="cli:ops", key=key,
                         argv=(cli, "ops", "--load", path), cli_check="ops-load",
                         op_tokens=(os.path.basename(path), path), arg_tokens=()))
    for pid, name in (("name-missing", "nowhere::nothing"), ("name-empty", ""), ("name-long", "a::" + "b" * 100000),
                      ("name-dot", "plugin::identity."), ("name-colons", "::::"), ("name-nul-like", "plugin::identity\x01")):
        load = ("--load", str(plugin)) if plugin.exists() else ()
        out.append(Probe(id=f"cli:ops/{pid}", surface="cli:ops", argv=(cli, "ops", *load, name),
                         cli_check="ops-any", op_tokens=(name[:20] or "name", "op", "usage"), arg_tokens=()))
    if plugin.exists():
        out.append(Probe(id="cli:ops/load-valid-plugin", surface="cli:ops",
                         argv=(cli, "ops", "--load", str(plugin)), cli_check="ops-list"))
        out.append(Probe(id="cli:ops/dump-valid", surface="cli:ops",
                         argv=(cli, "ops", "--load", str(plugin), "plugin::identity"), cli_check="ops-name"))
    return out
