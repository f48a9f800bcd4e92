"""register_autograd for opreg's torch ops: the Python autograd kernel torch.library makes, in a
torch Library of its own that the op's record keeps (a later call replaces it, a redefinition of
the op destroys it). An op without one has no autograd kernel at all, as a native TORCH_LIBRARY
op without one: torch's C++ autograd fallback runs, with no Python frame.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import torch

from ._records import RECORDS


def register_autograd(qualified: str, backward: Callable[..., Any],
                      setup_context: Optional[Callable[..., Any]]) -> None:
    """Gives registered torch op `qualified` the autograd formula, replacing an earlier one."""
    with RECORDS.lock:
        record = RECORDS.get(qualified)
        if record is None or record.torch_op is None:
            raise RuntimeError(f"{qualified} is not a torch op")
        previous, record.autograd_lib = record.autograd_lib, None
        if previous is not None:
            previous._destroy()
        lib = torch.library.Library(qualified.split("::", 1)[0], "FRAGMENT")
        torch.library.register_autograd(record.torch_op, backward, setup_context=setup_context,
                                        lib=lib)
        record.autograd_lib = lib
