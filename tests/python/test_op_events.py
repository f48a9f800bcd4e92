"""The op event stream in Python (opreg._op_events over Dispatcher::Subscribe): replay on
subscribe, each definition and undefinition delivered once, synchronously to a Python definer,
from any thread, and a failing follower never costing the others an event."""
import itertools
import sys
import threading
from typing import List, Tuple

import pytest

import opreg
from opreg import _C, _op_events

_ns = itertools.count()


class Recorder:
    """A follower recording the events of one namespace (every namespace when None)."""

    def __init__(self, ns=None):
        self.ns = ns
        self.events: List[Tuple[str, str]] = []
        self._mu = threading.Lock()

    def __call__(self, kind: str, name: str) -> None:
        if self.ns is None or name.startswith(f"{self.ns}::"):
            with self._mu:
                self.events.append((kind, name))


def test_subscribing_replays_every_defined_op_once():
    ns = f"events_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("a(Tensor x) -> Tensor")
    lib.define("a.two(Tensor x, int k) -> Tensor")
    everything = Recorder()
    subscription = _op_events.subscribe(everything, replay=True)
    try:
        assert all(kind == "defined" for kind, _ in everything.events)
        names = [name for _, name in everything.events]
        assert sorted(names) == sorted(set(names)) == sorted(_C.list_ops())
        assert {f"{ns}::a", f"{ns}::a.two"} <= set(names)
        before = len(everything.events)
        _op_events.deliver()  # nothing queued from before the replay comes again
        assert len(everything.events) == before
    finally:
        subscription.close()
        lib._destroy()


def test_each_definition_and_undefinition_reaches_a_follower_once_in_order():
    ns = f"events_ns{next(_ns)}"
    heard = Recorder(ns)
    subscription = _op_events.subscribe(heard, replay=False)
    try:
        lib = opreg.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        assert heard.events == [("defined", f"{ns}::f")]  # before define returned
        lib._destroy()
        assert heard.events == [("defined", f"{ns}::f"), ("undefined", f"{ns}::f")]
        again = opreg.Library(ns, "DEF")  # defined anew under the same name
        again.define("f(Tensor x, int k) -> Tensor")
        assert heard.events[-1] == ("defined", f"{ns}::f")
        again._destroy()
    finally:
        subscription.close()
    lib = opreg.Library(ns, "DEF")
    lib.define("g(Tensor x) -> Tensor")  # closed: not heard
    _op_events.deliver()
    assert all(name != f"{ns}::g" for _, name in heard.events)
    lib._destroy()


def test_definitions_from_many_threads_each_reach_a_follower_once():
    ns = f"events_ns{next(_ns)}"
    heard = Recorder(ns)
    subscription = _op_events.subscribe(heard, replay=True)
    libs = [opreg.Library(ns, "FRAGMENT") for _ in range(4)]

    def define(t: int) -> None:
        for i in range(25):
            libs[t].define(f"op_{t}_{i}(Tensor x) -> Tensor")

    threads = [threading.Thread(target=define, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    _op_events.deliver()
    try:
        names = [name for kind, name in heard.events if kind == "defined"]
        assert len(names) == 100 and len(set(names)) == 100
    finally:
        subscription.close()
        for lib in libs:
            lib._destroy()


def test_a_follower_that_raises_costs_the_others_no_event(monkeypatch):
    ns = f"events_ns{next(_ns)}"
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: reported.append(args.exc_value))

    def broken(kind: str, name: str) -> None:
        if name.startswith(f"{ns}::"):
            raise ValueError("a broken follower")

    first = _op_events.subscribe(broken, replay=False)
    heard = Recorder(ns)
    second = _op_events.subscribe(heard, replay=False)
    try:
        lib = opreg.Library(ns, "DEF")
        lib.define("f(Tensor x) -> Tensor")
        assert heard.events == [("defined", f"{ns}::f")]
        assert [str(e) for e in reported] == ["a broken follower"]
        lib._destroy()
    finally:
        first.close()
        second.close()


def test_an_unknown_event_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown op event kind 'bogus'"):
        _C._queue_op_events([("bogus", "ns::f")])
