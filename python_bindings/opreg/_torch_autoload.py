"""torch's backend autoload entry point (entry-point group `torch.backends`, read at the end of
`import torch` since torch 2.5): with opreg installed, importing torch also imports opreg.torch,
so opreg's ops, and those of kernel libraries loaded later by either loader
(`torch.ops.load_library`, `opreg.load_library`, an extension-module import), are torch ops
without an `import opreg.torch` line. A package written for torch.library
(`torch.ops.load_library(...)` then `torch.library.register_autograd(...)`) then runs
unchanged on an opreg-built library.

OPREG_TORCH_AUTOLOAD=0 turns it off for opreg (TORCH_DEVICE_BACKEND_AUTOLOAD=0 turns off every
backend's). It never raises: `import torch` must work whatever happens here, so a failure is a
warning naming the cause, and `import opreg.torch` then reports it in full.
"""
from __future__ import annotations

import os
import warnings


def autoload() -> None:
    if os.environ.get("OPREG_TORCH_AUTOLOAD", "1") == "0":
        return
    try:
        import opreg.torch  # noqa: F401 - registers opreg's ops in torch.ops
    except Exception as e:  # noqa: BLE001 - torch's import must not fail because of opreg
        warnings.warn(f"opreg: autoloading opreg.torch at `import torch` failed "
                      f"({type(e).__name__}: {e}); `import opreg.torch` shows the full error, "
                      f"OPREG_TORCH_AUTOLOAD=0 skips the autoload", RuntimeWarning, stacklevel=2)
