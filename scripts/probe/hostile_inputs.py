#!/usr/bin/env python3
"""Hostile-input probe run over opreg's Python and CLI surfaces.

Generates several hundred probes of bad input and classifies each one:

  refused       a Python exception / a nonzero CLI exit with a message (the wanted answer to
                bad input); flagged `unclear` too when the message does not name the op (or the
                CLI input) and the argument or what was expected
  ok            accepted, and the result matches a reference (NumPy / torch's own ops, the
                trace format's rules, torch's schema parser, ...)
  ok-unchecked  accepted, no reference available (say why in `detail`)
  wrong         accepted but the result differs from the reference, an out / written argument
                was not written, an input that must not change changed, or an argument that
                must be refused (a read-only array to write, mixed devices) was accepted
  crash         the process died by a signal (or exited without answering)
  hang          no answer within the per-probe timeout
  not-run       the hostile input itself could not be built here (NumPy/torch refused it)
  probe-error   a bug in this script's checker (listed, never counted as opreg's)

Surfaces: `opreg.ops.opreg.<op>` with NumPy arrays, torch tensors and opreg tensors,
`torch.ops.opreg.<op>` (after `import opreg.torch`), the tensor constructors and methods,
`opreg.Library` / `opreg.library` / `opreg.custom_op` with hostile schema text,
`opreg.load_library` on hostile paths, `opreg.symm_mem` without a peer, and the CLI
(`opreg plan`, `opreg schema`, `opreg ops --load`).

Python probes run in a long-lived worker subprocess (this file with --worker) that is restarted
after a crash or a hang; CLI probes run with subprocess timeouts. Every child runs under an
address-space limit so that an unbounded allocation fails instead of exhausting the machine.

Run it:

    python scripts/probe/hostile_inputs.py                  # the full run (~1000 probes)
    python scripts/probe/hostile_inputs.py --quick          # ~150 representative probes (CI)
    python scripts/probe/hostile_inputs.py --json out.json  # also write every result as JSON
    python scripts/probe/hostile_inputs.py --list           # list the probes, run nothing

The CLI binary is $OPREG_CLI, else `opreg` on PATH, else build/release/cli/opreg under the repo
root (--cli PATH overrides); without one the CLI probes are skipped with the reason printed.
Exit status: 1 iff some probe crashed, hung or was wrong; 2 on a usage or harness error.

A repro line runs after
    import sys; sys.path.insert(0, "scripts/probe"); import hostile_inputs as h
    h.load_frameworks(); from hostile_inputs import *
which defines np, opreg, o = opreg.ops.opreg, torch, T = torch.ops.opreg and the input helpers
rnd / trnd / otnd / ro / misaligned (hostile/inputs.py).

This file is the command line; the code is in the package hostile/ next to it (its
__init__ lists the modules).
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:  # loaded by file path: the package hostile/ lives next to this file
    sys.path.insert(0, _HERE)

from hostile import frameworks  # noqa: E402
from hostile.checkers import (chk_accepted, chk_arange, chk_ctor, chk_custom, chk_dtype_echo,  # noqa: E402
                              chk_full, chk_library_ns, chk_schema, chk_tensor, chk_tensor_data,
                              chk_values, sm_ok)
from hostile.frameworks import np  # noqa: E402
from hostile.inputs import misaligned, nanify, otnd, ro, rnd, trnd, zcplx  # noqa: E402
from hostile.main import main  # noqa: E402
from hostile.schemas import SCHEMA_TEXTS  # noqa: E402

# For repro lines (`from hostile_inputs import *`): what probe source text may use.
__all__ = ["np", "opreg", "o", "torch", "T", "rnd", "trnd", "otnd", "ro", "misaligned", "nanify",
           "zcplx", "SCHEMA_TEXTS", "chk_tensor", "chk_values", "chk_schema", "chk_custom",
           "chk_ctor", "chk_dtype_echo", "chk_full", "chk_arange", "chk_tensor_data",
           "chk_accepted", "sm_ok", "chk_library_ns", "load_frameworks", "main"]

torch: Any = None
T: Any = None
o: Any = None
opreg: Any = None


def load_frameworks(with_torch: bool = True) -> str:
    """Imports opreg (and torch with opreg.torch when available), for the package and into this
    module's globals; returns why torch is not there ("" when it is)."""
    global torch, T, o, opreg
    note = frameworks.load_frameworks(with_torch)
    torch, T, o, opreg = frameworks.torch, frameworks.T, frameworks.o, frameworks.opreg
    return note


if __name__ == "__main__":
    sys.exit(main())
