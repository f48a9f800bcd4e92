"""Making an opreg op a torch op, undoing it, and following the op event stream so that every op
defined by any code becomes one. Every change is made with `RECORDS.lock` held.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Tuple

import torch

from .. import _op_events
from . import _aliasing, _autograd, _kernel_set
from ._kernel_set import KernelSpec, overload_of, sync_kernels
from ._records import RECORDS


def torch_has(qualified: str) -> bool:
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    try:
        torch._C._dispatch_find_schema_or_throw(f"{ns}::{name}", overload)
        return True
    except RuntimeError:
        return False


def _tags(opreg_op: Any) -> Tuple[Any, ...]:
    return tuple(tag for tag in (getattr(torch.Tag, t, None) for t in opreg_op.tags)
                 if tag is not None)


_BARE_DEVICE_DEFAULT = re.compile(r'\bDevice\s+\w+=(?!None\b)([A-Za-z_][\w:]*)')


def _parsable_by_torch(text: str) -> str:
    """A schema in the form torch's parser takes back. The canonical text (torch's own
    printing) writes a Device default bare (`Device d=cpu`), which torch's parser refuses (it
    takes only a string literal there), so those defaults are quoted; string literals are
    left as they are. A `Device?` default other than None is not: torch would take it as a
    string and fail when the default is used, so such an op stays out of torch, as before."""
    out, i = [], 0
    while i < len(text):
        if text[i] in "'\"":  # a string literal, to its closing quote (escapes skipped)
            j = i + 1
            while j < len(text) and text[j] != text[i]:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
            continue
        m = _BARE_DEVICE_DEFAULT.match(text, i)  # its \b looks at text[i - 1] too
        if m is not None:
            out.append(text[i:m.start(1)] + '"' + m.group(1) + '"')
            i = m.end()
            continue
        out.append(text[i])
        i += 1
    return "".join(out)


def _disarm(qualified: str, torch_op: Any) -> None:
    """Makes the torch op objects of an op about to be deleted raise when called. torch frees the
    op's dispatcher entry with its library, and an OpOverload or OpOverloadPacket fetched before
    (a caller may keep one) would then call into freed memory: torch's own `_destroy` says
    "accessing it leads to a segfault", and a call with arguments that do not fit the schema did
    crash this way (torch 2.15, an op redefined with another schema). The op's OpOverload and its
    packet (whose overload resolution includes the deleted overload) are disarmed; the packet's
    other overloads stay callable. `torch.ops.<ns>.<name>` gives new objects for the op defined
    next."""
    ns, rest = qualified.split("::", 1)
    name = rest.partition(".")[0]

    def stale(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"[{qualified}] this torch op object was fetched before the op was redefined or "
            f"removed, and torch has deleted the op it called: fetch torch.ops.{ns}.{name} again")

    for obj in (torch_op, getattr(torch_op, "overloadpacket", None)):
        if obj is not None:
            obj._op = stale


def unregister(qualified: str) -> None:
    """Undoes every torch registration of an op (opreg.torch's and register_autograd's)."""
    record = RECORDS.get(qualified)
    companion = RECORDS.get(record.companion) if record and record.companion else None
    RECORDS.drop(qualified)
    if record is None:
        return
    if record.torch_op is not None:
        _disarm(qualified, record.torch_op)
    released = all([_kernel_set.release(r) for r in (record, companion) if r is not None])
    for lib in record.libs:
        lib._destroy()
    if record.autograd_lib is not None:
        record.autograd_lib._destroy()
    if not released:
        warnings.warn(f"{qualified} was redefined, and this torch cannot delete its old C++ "
                      f"kernels: the new ones override them")


def _register(qualified: str) -> None:
    record = RECORDS.get(qualified)
    if record is not None and record.owner is None:
        try:
            text = overload_of(qualified).schema
        except AttributeError:  # no longer defined: its torch op stays, and says so when called
            return
        if record.schema_text == text:
            _follow_custom_op(record)  # the same torch op serves the new definition
            refresh_kernels(qualified)  # with the new definition's kernels
            return
        unregister(qualified)  # redefined with another schema: the torch op follows it
    elif RECORDS.skipped_reason(qualified) is not None:
        return
    if torch_has(qualified):
        RECORDS.skip(qualified, "torch already has an op of this name")
        return
    opreg_op = overload_of(qualified)
    text = opreg_op.schema
    ns, rest = qualified.split("::", 1)
    name, _, overload = rest.partition(".")
    record = RECORDS.new(qualified, schema_text=text)
    lib = torch.library.Library(ns, "FRAGMENT")
    record.libs.append(lib)
    text = _parsable_by_torch(text)  # record.schema_text keeps the canonical text
    try:
        lib.define(text.split("::", 1)[1], tags=_tags(opreg_op))
    except RuntimeError as e:
        unregister(qualified)
        RECORDS.skip(qualified, f"torch refused the schema: {e}")
        return
    schema = torch._C.parse_schema(text)
    target = f"{name}.{overload}" if overload else name
    if any(i is not None for i in _aliasing.aliased_returns(schema)):
        _aliasing.register_aliasing(record, text, schema, target)
    else:
        record.spec = KernelSpec(qualified, schema, target, qualified)
        sync_kernels(record)
    record.torch_op = getattr(getattr(getattr(torch.ops, ns), name), overload or "default")
    _follow_custom_op(record)


def refresh_kernels(qualified: str) -> None:
    """Brings torch op `qualified`'s kernels in step with the opreg op's (_kernel_set): after a
    Python CompositeImplicit kernel is registered or removed, a backend kernel registered beside
    one, the op undefined or defined again."""
    record = RECORDS.get(qualified)
    if record is None or record.torch_op is None or record.spec is None:
        return
    companion = RECORDS.get(record.companion) if record.companion else None
    for r in (record, companion):  # a companion follows its owner's composite kernel
        if r is not None and r.spec is not None and r.torch_op is not None:
            sync_kernels(r)
            r.torch_op._dispatch_cache.clear()  # torch's Python dispatcher resolved the old ones


def _follow_custom_op(record: Any) -> None:
    """An op made by opreg.custom_op starts without an autograd formula, as torch's do: a new
    custom_op definition (also one under the schema the torch op already has) refuses backward
    until register_autograd gives it a formula, whatever the previous definition had."""
    lib = _op_events.CUSTOM_OPS.get(record.qualified)
    if lib is None or lib is record.custom_op_lib:
        return
    record.custom_op_lib = lib
    _autograd.refuse_backward(record)


def register_or_skip(qualified: str) -> None:
    """_register, with a failure recorded in skipped() rather than raised: one op torch cannot
    take never keeps the others out."""
    try:
        _register(qualified)
    except BaseException as e:
        if RECORDS.torch_op(qualified) is None:
            unregister(qualified)  # no half-made torch op left to block a later attempt
        if not isinstance(e, Exception):
            raise  # an interrupt: the op stays unregistered, a later sync() or define retries
        RECORDS.skip(qualified, f"{type(e).__name__}: {e}", keep_first=True)


def on_op_event(kind: str, qualified: str) -> None:
    """The op event stream's follower (opreg._op_events), for every kind of event: an op defined
    by any code becomes a torch op, and a name skipped before (its schema refused, torch's op of
    that name since gone) is tried again; a registered op's torch kernels follow its opreg
    kernels ("kernels": its Python CompositeImplicit kernels changed) and its undefinition (its
    torch op stays, and says so when called). The stream is handed over at any bytecode boundary
    of the main thread, so also inside opreg.torch's own registration code: there the name waits
    for the lock's release."""
    if RECORDS.lock.held_here():
        RECORDS.lock.defer(qualified)
        return
    with RECORDS.lock:
        try:
            overload_of(qualified)
        except AttributeError:
            refresh_kernels(qualified)  # undefined
            return
        RECORDS.unskip(qualified)
        register_or_skip(qualified)


RECORDS.lock.on_release = lambda qualified: on_op_event("deferred", qualified)
