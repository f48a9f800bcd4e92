"""The op event stream in Python, and the tables opreg's Python modules share, so that no module
reaches into another's private names or imports it back.

- `subscribe(follower, replay=True)`: `follower(kind, name)` for each op event from now on,
  kind "defined" or "undefined", for every op of every origin (C++ libraries as they load,
  opreg.Library from Python), or "kernels" when the op's Python composite kernels changed (see
  `COMPOSITES`); with `replay`, first ("defined", name) for each op defined at that moment. Each
  event reaches each follower once, in order. Returns a Subscription (`close()`).
  The events come from the dispatcher's stream (Dispatcher::Subscribe, one subscription for the
  process): they are handed over on the main thread at a bytecode boundary, or at once by
  `deliver()`, which opreg.Library.define and opreg.load_library call after defining (so a
  Python definition is followed before define returns, on the defining thread). Followers run
  with the GIL held, in subscription order; one that raises is reported as unraisable and the
  others still run.
- `FAKES`: "ns::name[.overload]" -> the fake given to register_fake (opreg.library), which
  opreg.torch gives torch as the op's torch-level fake.
- `COMPOSITES`: "ns::name[.overload]" -> the Python functions opreg.Library.impl registered as
  the op's CompositeImplicit kernel, oldest first (the newest is the one opreg's dispatcher
  runs), each as (fn, whether it takes torch values: all but those annotated with opreg types).
  When the newest takes torch values, opreg.torch makes the op CompositeImplicitAutograd in
  torch, calling it with torch values (`composites_changed` tells the followers).
- `CUSTOM_OPS`: "ns::name" -> the Library that holds an op made by `opreg.custom_op`, kept for
  the process as torch keeps a custom_op's (defining the name again destroys it first, as
  torch's custom_op does); opreg.torch gives such an op without register_autograd torch's
  custom_op behaviour (a backward through it raises).
- `torch_op_of(name)`: the torch OpOverload opreg.torch registered for an op, None when there
  is none or opreg.torch is not imported (opreg.custom_op calls through it for torch tensors).
  opreg.torch, which owns the records, installs the lookup (`set_torch_op_lookup`).

This module imports only opreg's extension module: every module may import it.
"""
from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import _C

FAKES: Dict[str, Callable[..., Any]] = {}
COMPOSITES: Dict[str, List[Tuple[Callable[..., Any], bool]]] = {}
CUSTOM_OPS: Dict[str, Any] = {}


def _no_torch_op(name: str) -> Any:
    return None


torch_op_of: Callable[[str], Any] = _no_torch_op


def set_torch_op_lookup(lookup: Callable[[str], Any]) -> None:
    """Called by opreg.torch as it is imported (see the module's docstring)."""
    global torch_op_of
    torch_op_of = lookup


Follower = Callable[[str, str], None]


class Subscription:
    """A follower's place in the stream; `close()` stops its events (idempotent)."""

    def __init__(self, follower: Follower, replayed: Set[str]) -> None:
        self.follower = follower
        # Ops its replay reported whose queued "defined" event (from before the replay) must
        # not reach it a second time.
        self.replayed = replayed

    def close(self) -> None:
        with _lock:
            if self in _subscriptions:
                _subscriptions.remove(self)


_lock = threading.RLock()
_subscriptions: List[Subscription] = []
_stream_open = False


def _deliver(events: List[Tuple[str, str]]) -> None:
    """The dispatcher stream's callback (GIL held)."""
    with _lock:
        subscriptions = list(_subscriptions)
    for i, (kind, name) in enumerate(events):
        try:
            for s in subscriptions:
                if kind != "kernels" and s.replayed and name in s.replayed:
                    s.replayed.discard(name)
                    if kind == "defined":
                        continue  # its replay told it already
                try:
                    s.follower(kind, name)
                except Exception:
                    sys.unraisablehook(_unraisable(s.follower))
        except BaseException:  # an interrupt: the rest are handed over again later
            _C._queue_op_events(events[i:])
            raise


def _unraisable(follower: Follower) -> Any:
    exc_type, exc, tb = sys.exc_info()
    return type("UnraisableHookArgs", (), {
        "exc_type": exc_type, "exc_value": exc, "exc_traceback": tb,
        "err_msg": "an opreg op event follower failed", "object": follower})()


def subscribe(follower: Follower, *, replay: bool = True) -> Subscription:
    """See the module's docstring."""
    global _stream_open
    with _lock:
        if not _stream_open:
            _C._subscribe_op_events(_deliver)
            _stream_open = True
    deliver()  # what is queued goes to the followers that were there before this one
    with _lock:
        names = _C.list_ops() if replay else []
        subscription = Subscription(follower, set(names))
        _subscriptions.append(subscription)
    for name in names:
        follower("defined", name)
    return subscription


def torch_composite(qualified: str) -> Optional[Callable[..., Any]]:
    """The op's newest Python CompositeImplicit kernel (`COMPOSITES`) when it takes torch values;
    None when it has none or the newest is written for opreg values."""
    entries = COMPOSITES.get(qualified)
    return entries[-1][0] if entries and entries[-1][1] else None


def composites_changed(qualified: str, *, now: bool = True) -> None:
    """Tells the followers ("kernels", qualified) after the op's `COMPOSITES` entry changed: at
    once on this thread (`now`), else at the main thread's next bytecode boundary (from a garbage
    collector's finalizer, where registering with torch must not run)."""
    if _stream_open:
        _C._queue_op_events([("kernels", qualified)])
        if now:
            deliver()


def deliver() -> None:
    """Hands the queued events to the followers now, on this thread."""
    if _stream_open:
        _C._deliver_op_events()


def close_stream() -> None:
    """Schedules no more hand-overs (the interpreter is exiting)."""
    _C._stop_define_listener()
