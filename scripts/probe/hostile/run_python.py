"""Worker side: running one Python probe. run_op_probe() calls a built-in op and checks it
against its reference; run_api_probe() runs any other call and judges it by its `expect`
expression (the chk_* checkers)."""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterator, List, Sequence, Tuple

from .frameworks import np
from .model import Probe, unclear_reason
from .references import OPS, REFERENCES, bind, compare
from .values import (Logical, NoReference, RefRejects, framework_of, is_tensor_like, logical,
                     overlaps, same_bits)


def _refused(e: BaseException, p: Probe) -> Dict[str, Any]:
    msg = f"{type(e).__name__}: {e}"
    return {"outcome": "refused", "message": msg,
            "unclear": unclear_reason(msg, p.op_tokens, p.arg_tokens)}


def _tensor_items(args: Sequence[Any], kwargs: Dict[str, Any]) -> Iterator[Tuple[str, Any]]:
    for i, a in enumerate(args):
        if is_tensor_like(a):
            yield f"arg#{i}", a
    for k, v in kwargs.items():
        if is_tensor_like(v):
            yield k, v


def run_op_probe(p: Probe, ns: Dict[str, Any]) -> Dict[str, Any]:
    """Calls a built-in op; checks refusals left the arguments alone and accepted calls against
    the op's reference (outputs, out / written arguments, untouched inputs)."""
    try:
        if p.setup:
            exec(p.setup, ns)
        target = eval(p.target, ns)
        args = [eval(a, ns) for a in p.args]
        kwargs = {k: eval(v, ns) for k, v in p.kwargs}
    except Exception as e:
        return {"outcome": "not-run", "detail": f"building the input failed: {type(e).__name__}: {e}"}
    op = OPS[p.op]
    params = op.signature(p.overload)
    written = op.written(p.overload)
    try:
        bound = bind(params, args, kwargs)
        bind_error = ""
    except TypeError as e:
        bound, bind_error = {}, str(e)
    before = {name: logical(v) for name, v in _tensor_items(args, kwargs)}
    written_objs = [bound[w] for w in written if w in bound and is_tensor_like(bound[w])]

    try:
        ret = target(*args, **kwargs)
    except Exception as e:
        changed = [n for n, v in _tensor_items(args, kwargs) if not same_bits(before[n].values, logical(v).values)]
        res = _refused(e, p)
        if changed:
            return {"outcome": "wrong", "detail": f"refused, yet modified {', '.join(changed)}",
                    "message": res["message"]}
        return res

    if p.must_refuse:
        return {"outcome": "wrong", "detail": f"accepted {p.must_refuse}"}
    if bind_error:
        return {"outcome": "wrong", "detail": f"accepted a call the schema rejects ({bind_error})"}
    # Inputs that must not change: every tensor argument that is not written and shares no
    # memory with a written one.
    for name, v in _tensor_items(args, kwargs):
        if any(v is w for w in written_objs) or any(overlaps(v, w) for w in written_objs):
            continue
        if not same_bits(before[name].values, logical(v).values):
            return {"outcome": "wrong", "detail": f"input {name} was modified"}
    logical_args = {}
    for prm in params:
        v = bound[prm.name]
        if prm.kind == "Tensor" and v is None:
            return {"outcome": "wrong", "detail": f"accepted None for the non-optional Tensor '{prm.name}'"}
        if prm.kind.startswith("Tensor") and v is not None:
            if not is_tensor_like(v):
                if not isinstance(v, (list, tuple, float, int)):
                    return {"outcome": "wrong", "detail": f"accepted a {type(v).__name__} for Tensor '{prm.name}'"}
                arr = np.asarray(v, np.float32)  # judged as the float32 tensor it spells
                logical_args[prm.name] = Logical(arr.shape, "float32", "cpu", arr, "python")
                continue
            key = next((n for n, a in _tensor_items(args, kwargs) if a is v), None)
            lg = before[key] if key else logical(v)
            if lg.is_meta:  # shapes and dtypes only: the reference runs on zeros
                lg = dataclasses.replace(lg, values=np.zeros(lg.shape))
            logical_args[prm.name] = lg
        else:
            logical_args[prm.name] = v
    devices = {lg.device for n, lg in logical_args.items() if isinstance(lg, Logical) and n not in written}
    if len(devices) > 1:
        return {"outcome": "wrong", "detail": f"accepted tensors on devices {sorted(devices)}"}
    try:
        expected = REFERENCES[p.op](logical_args)
    except RefRejects as e:
        if p.target.startswith("T.") and "None" in str(e):
            # torch's own argument parser, not opreg, turns None into a value for these
            # (aten ops do the same: torch.ops.aten.topk(x, 3, -1, None) is largest=False).
            return {"outcome": "ok-unchecked", "detail": f"torch's parser accepted it: {e}"}
        return {"outcome": "wrong", "detail": f"accepted: {e}"}
    except NoReference as e:
        return {"outcome": "ok-unchecked", "detail": str(e)}

    # What came back, and what the written arguments hold now.
    results: List[Tuple[str, Any]] = []
    if written:
        for w in written:
            results.append((f"written '{w}'", bound[w]))
        if p.overload == "out":
            rets = ret if isinstance(ret, (tuple, list)) else (ret,)
            if len(rets) != len(written):
                return {"outcome": "wrong", "detail": f"returned {len(rets)} values for {len(written)} outs"}
            results += [(f"returned #{i}", r) for i, r in enumerate(rets)]
            expected = expected + expected
        elif ret is not None:
            return {"outcome": "wrong", "detail": f"an in-place op returned {type(ret).__name__}"}
    else:
        rets = ret if isinstance(ret, (tuple, list)) else (ret,)
        if len(rets) != len(expected):
            return {"outcome": "wrong", "detail": f"returned {len(rets)} values, want {len(expected)}"}
        results = [(f"returned #{i}", r) for i, r in enumerate(rets)]
    got = []
    for what, r in results:
        if not is_tensor_like(r):
            return {"outcome": "wrong", "detail": f"{what} is a {type(r).__name__}"}
        got.append(logical(r))
    for i, ((what, _), g, want) in enumerate(zip(results, got, expected)):
        group = got[(i // len(written)) * len(written):][:len(written)] if written else got
        why = compare(g, want, what, group if written else got)
        if why:
            return {"outcome": "wrong", "detail": why}
    why = _framework_rule(args, kwargs, [r for _, r in results], got)
    if why:
        return {"outcome": "wrong", "detail": why}
    if any(g.is_meta for g in got):
        return {"outcome": "ok", "detail": "meta: shapes and dtypes checked"}
    return {"outcome": "ok", "detail": ""}


def _framework_rule(args: Sequence[Any], kwargs: Dict[str, Any], rets: Sequence[Any],
                    got: Sequence[Logical]) -> str:
    """The documented rule: results come back in the framework of the tensor arguments (NumPy
    only for dtypes NumPy has)."""
    fws = {framework_of(v) for _, v in _tensor_items(args, kwargs)}
    if len(fws) != 1:
        return ""
    fw = fws.pop()
    for r, g in zip(rets, got):
        want = fw
        if fw == "numpy" and g.dtype not in np.sctypeDict:
            want = "opreg"
        if framework_of(r) != want:
            return f"a {fw} call returned a {framework_of(r)} result ({g.dtype})"
    return ""


def run_api_probe(p: Probe, ns: Dict[str, Any]) -> Dict[str, Any]:
    """Runs setup and call; an accepted call is judged by `expect` (an expression over r that
    gives None: ok, "unchecked: why": ok-unchecked, or a string: wrong)."""
    try:
        if p.setup:
            exec(p.setup, ns)
    except Exception as e:
        return {"outcome": "not-run", "detail": f"setup failed: {type(e).__name__}: {e}"}
    try:
        r = eval(p.call, ns)
    except Exception as e:
        return _refused(e, p)
    if p.must_refuse:
        return {"outcome": "wrong", "detail": f"accepted {p.must_refuse}"}
    if not p.expect:
        return {"outcome": "ok-unchecked", "detail": "no reference for this call"}
    ns["r"] = r
    try:
        verdict = eval(p.expect, ns)
    except Exception as e:
        return {"outcome": "probe-error", "detail": f"checker failed: {type(e).__name__}: {e}"}
    if verdict is None:
        return {"outcome": "ok", "detail": ""}
    if isinstance(verdict, str) and verdict.startswith("unchecked"):
        return {"outcome": "ok-unchecked", "detail": verdict}
    return {"outcome": "wrong", "detail": str(verdict)}
