"""Probes of opreg's tensor API: op lookup, the constructors, opreg.Tensor methods and ops
without a reference; python_probes() is every Python probe, in order."""
from __future__ import annotations

from typing import List

from . import frameworks
from .gen_lib import gen_custom_op_probes, gen_load_library_probes, gen_schema_probes, gen_symm_mem_probes
from .gen_ops import FW_NUMPY, FW_OPREG, FW_TORCH, FW_TORCH_OPS, gen_op_probes
from .model import Gen, Probe
from .references import OPS


def gen_op_lookup(g: Gen) -> None:
    """opreg.ops attribute lookups and overload objects."""
    cases = [
        ("missing-op", "o.no_such_op", ("no_such_op",)),
        ("missing-namespace-op", "opreg.ops.no_such_ns.op", ("no_such_ns",)),
        ("missing-overload", "o.add.no_such_overload", ("no_such_overload",)),
        ("odd-name", "getattr(o, 'add.out')", ("add.out",)),
        ("unicode-name", "getattr(o, 'äðð')", ("äðð",)),
        ("long-name", "getattr(o, 'x' * 10**6)", ("xxxx",)),
        ("empty-namespace", "getattr(opreg.ops, '')", ("namespace", "''")),
        ("schema-of-missing", "opreg.schema('nowhere::nothing')", ("nowhere::nothing",)),
        ("schema-of-empty", "opreg.schema('')", ("''", "name")),
        ("schema-of-long", "opreg.schema('a::' + 'b' * 10**6)", ("a::bbb",)),
        ("dump-op-overload-dot", "opreg.dump_op('opreg::add.')", ("opreg::add.",)),
        ("dump-op-nul", "opreg.dump_op('opreg::add\\x00.out')", ("opreg::add",)),
        ("default-overload-call", "o.add.default(rnd((2, 3)), rnd((2, 3), seed=1))", ()),
        ("opoverload-by-string", "opreg.OpOverload('opreg::add.nope')", ("opreg::add.nope",)),
        ("oppacket-by-bad-string", "opreg.OpPacket('no_separator')", ("no_separator",)),
    ]
    for pid, call, tokens in cases:
        expect = ""
        if pid == "default-overload-call":
            expect = "chk_values(r, rnd((2, 3)) + rnd((2, 3), seed=1))"
        g.add(Probe(id=f"op-lookup/{pid}", surface="op-lookup", call=call, expect=expect,
                    op_tokens=tokens, arg_tokens=()))


def gen_constructors(g: Gen) -> None:
    """opreg.empty / zeros / ones / full / arange / empty_like / from_dlpack / tensor."""
    sizes = [("neg", "(-1,)"), ("2**31", "(2**31,)"), ("2**62", "(2**62,)"), ("2**63-1", "(2**63-1,)"),
             ("2**63", "(2**63,)"), ("-2**63", "(-2**63,)"), ("numel-overflow", "(2**31, 2**31, 2**31)"),
             ("bytes-overflow", "(2**31, 2**31)"), ("float", "(2.5,)"), ("str", "('3',)"),
             ("None", "None"), ("nested", "((2,), 3)"), ("bool", "(True, 2)"), ("1000-dims", "(1,) * 1000"),
             ("100k-dims", "(1,) * 100000"), ("zero", "(0, 5)"), ("np-int", "(np.int64(3),)"),
             ("np-uint64-max", "(np.uint64(2**64-1),)")]
    for pid, shape in sizes:
        for ctor in ("empty", "zeros"):
            if ctor == "zeros" and pid not in ("neg", "2**63-1", "bytes-overflow", "float", "100k-dims"):
                continue  # zeros would touch 8 GiB; the rest repeat empty's parsing
            want = _ctor_expect(shape)
            g.add(Probe(id=f"constructors/{ctor}-{pid}", surface="constructors",
                        call=f"opreg.{ctor}({shape}, 'float32')", expect=want,
                        key=pid in ("bytes-overflow", "2**63-1", "neg"),
                        op_tokens=(ctor, "shape", "size"), arg_tokens=("shape", "size", "sizes", "dim")))
    dtypes = ["'bogus'", "''", "5", "np.float32", "'complex64'", "'flöat32'", "'x' * 10**6",
              "'float32\\x00junk'", "object()", "'FLOAT32'"]
    for dt in dtypes:
        g.add(Probe(id=f"constructors/empty-dtype-{dt[:20]}", surface="constructors",
                    call=f"opreg.empty((2, 3), {dt})", expect=f"chk_dtype_echo(r, (2, 3), {dt})",
                    op_tokens=("empty", "dtype"), arg_tokens=("dtype",)))
    fulls = [("nan", "float('nan')", "'float32'"), ("inf", "float('inf')", "'float32'"),
             ("int8-300", "300", "'int8'"), ("int8-neg-129", "-129", "'int8'"), ("uint8-neg", "-1", "'uint8'"),
             ("int64-2**63", "2**63", "'int64'"), ("int64-2**63-1", "2**63-1", "'int64'"),
             ("int32-1.5", "1.5", "'int32'"), ("bool-2", "2", "'bool'"), ("f16-1e5", "1e5", "'float16'"),
             ("f32-1e39", "1e39", "'float32'"), ("int8-nan", "float('nan')", "'int8'"),
             ("str", "'x'", "'float32'"), ("complex", "1j", "'float32'"), ("None", "None", "'float32'"),
             ("f8-1000", "1000.0", "'float8_e4m3fn'")]
    for pid, value, dt in fulls:
        g.add(Probe(id=f"constructors/full-{pid}", surface="constructors",
                    call=f"opreg.full((3,), {value}, {dt})", expect=f"chk_full(r, {value}, {dt})",
                    key=pid in ("int8-300", "int64-2**63-1", "int32-1.5"),
                    op_tokens=("full",), arg_tokens=("fill_value", "value", "fill")))
    aranges = [("neg", "-5"), ("2**62", "2**62"), ("2**63", "2**63"), ("float", "2.5"), ("nan", "float('nan')"),
               ("str", "'5'"), ("zero", "0"), ("ten", "10"), ("int8-200", "200, 'int8'"), ("bool", "True")]
    for pid, a in aranges:
        g.add(Probe(id=f"constructors/arange-{pid}", surface="constructors", call=f"opreg.arange({a})",
                    expect=f"chk_arange(r, {a})", key=pid == "int8-200",
                    op_tokens=("arange",), arg_tokens=("end", "size", "dtype", "value")))
    dl = [("int", "3", ()), ("None", "None", ()), ("str", "'abc'", ()), ("list", "[1.0, 2.0]", ()),
          ("bad-dlpack-method", "type('X', (), {'__dlpack__': lambda self, **k: 42, '__dlpack_device__': lambda self: (1, 0)})()", ()),
          ("raising-dlpack", "type('X', (), {'__dlpack__': lambda self, **k: 1/0, '__dlpack_device__': lambda self: (1, 0)})()", ()),
          ("weird-device", "type('X', (), {'__dlpack__': lambda self, **k: rnd((2,)).__dlpack__(), '__dlpack_device__': lambda self: (99, -7)})()", ()),
          ("readonly-numpy", "ro(rnd((2, 3)))", ()), ("bigendian-numpy", "rnd((2, 3)).astype('>f4')", ()),
          ("object-array", "np.array([1, 'a'], dtype=object)", ()),
          ("structured", "np.zeros(3, dtype=[('a', 'f4'), ('b', 'i4')])", ()),
          ("datetime", "np.arange(3).astype('datetime64[s]')", ()), ("strings", "np.array(['ab', 'cd'])", ()),
          ("negative-strides", "rnd((4, 3))[::-1]", ()), ("stride-0", "np.broadcast_to(rnd((1, 3)), (4, 3))", ()),
          ("0-dim", "np.array(3.5, np.float32)", ()), ("misaligned", "misaligned((5,))", ()),
          ("capsule-twice", "(lambda c: (opreg.from_dlpack(c), opreg.from_dlpack(c)))(rnd((2,)).__dlpack__())", ())]
    for pid, src, _ in dl:
        expect = f"chk_values(r, {src})" if pid in ("readonly-numpy", "bigendian-numpy", "negative-strides",
                                                     "stride-0", "0-dim", "misaligned") else ""
        if pid == "weird-device":
            expect = "'unchecked: __dlpack_device__ (99, -7) ignored' if chk_values(r, rnd((2,))) is None else chk_values(r, rnd((2,)))"
        must = "a capsule used twice" if pid == "capsule-twice" else ""
        g.add(Probe(id=f"constructors/from_dlpack-{pid}", surface="constructors",
                    call=f"opreg.from_dlpack({src})", expect=expect, must_refuse=must,
                    key=pid in ("capsule-twice", "bigendian-numpy", "bad-dlpack-method"),
                    op_tokens=("dlpack",), arg_tokens=()))
    tens = [("ragged", "[[1, 2], [3]]", ""), ("strings", "['a', 'b']", ""), ("huge-int", "[2**70]", ""),
            ("deep", "eval('[' * 200 + '1' + ']' * 200)", ""), ("None", "None", ""),
            ("bad-dtype", "[1, 2], 'bogus'", ""), ("int8-overflow", "[300], 'int8'", ""),
            ("float", "[1.5, 2.5]", "chk_values(r, np.array([1.5, 2.5], np.float32), 'float32')"),
            ("tensor-copy", "opreg.ones((2,))", "chk_values(r, np.ones(2, np.float32))")]
    for pid, src, expect in tens:
        g.add(Probe(id=f"constructors/tensor-{pid}", surface="constructors", call=f"opreg.tensor({src})",
                    expect=expect or "chk_tensor_data(r)", op_tokens=("tensor",), arg_tokens=()))
    likes = [("int", "3"), ("None", "None"), ("meta-shape", "opreg.empty((2,), device='meta')"),
             ("bogus-device", "opreg.ones((2,)), device='tpu'")]
    for pid, src in likes:
        g.add(Probe(id=f"constructors/empty_like-{pid}", surface="constructors", call=f"opreg.empty_like({src})",
                    expect="chk_accepted(r)", op_tokens=("empty_like", "like", "device"), arg_tokens=()))
    for dev in ("'tpu'", "'cuda:99'", "'cpu:-5'", "'meta:x'", "5", "''", "'cpu' * 10**5"):
        g.add(Probe(id=f"constructors/empty-device-{dev[:14]}", surface="constructors",
                    call=f"opreg.empty((2,), 'float32', {dev})", expect="chk_accepted(r)",
                    op_tokens=("device", "cuda", "tpu", "meta", "cpu"), arg_tokens=()))


def _ctor_expect(shape: str) -> str:
    return f"chk_ctor(r, {shape})"


def gen_tensor_methods(g: Gen) -> None:
    """opreg.Tensor methods with hostile arguments."""
    calls = [
        ("narrow-huge-start", "otnd((4, 3)).narrow(0, 2**62, 1)", ""),
        ("narrow-negative-length", "otnd((4, 3)).narrow(0, 1, -2)", ""),
        ("narrow-overflow", "otnd((4, 3)).narrow(0, 2**63-1, 2)", ""),
        ("narrow-bad-dim", "otnd((4, 3)).narrow(5, 0, 1)", ""),
        ("narrow-valid", "otnd((4, 3)).narrow(0, 1, 2)", "chk_values(r, rnd((4, 3))[1:3])"),
        ("select-out-of-range", "otnd((4, 3)).select(0, 4)", ""),
        ("select-negative", "otnd((4, 3)).select(0, -5)", ""),
        ("select-valid-negative", "otnd((4, 3)).select(0, -1)", "chk_values(r, rnd((4, 3))[-1])"),
        ("select-bad-dim", "otnd((4, 3)).select(-3, 0)", ""),
        ("reshape-two-minus-one", "otnd((4, 3)).reshape((-1, -1))", ""),
        ("reshape-wrong-numel", "otnd((4, 3)).reshape((5, 3))", ""),
        ("reshape-huge", "otnd((4, 3)).reshape((2**62, 0))", ""),
        ("reshape-valid", "otnd((4, 3)).reshape((3, -1))", "chk_values(r, rnd((4, 3)).reshape(3, 4))"),
        ("view-dtype-str", "otnd((4, 3)).view('uint8')", ""),
        ("view-bogus", "otnd((4, 3)).view('bogus')", ""),
        ("view-valid", "otnd((4, 3)).view((12,))", "chk_values(r, rnd((4, 3)).reshape(12))"),
        ("view-noncontiguous", "opreg.from_dlpack(rnd((4, 3)).T).view((12,))", ""),
        ("copy-shape-mismatch", "otnd((4, 3)).copy_(otnd((3, 4)))", ""),
        ("copy-dtype", "otnd((4, 3)).copy_(otnd((4, 3), 'int8'))", "chk_values(r, rnd((4, 3), 'int8').astype(np.float32))"),
        ("copy-readonly-dst", "opreg.from_dlpack(ro(rnd((4, 3)))).copy_(otnd((4, 3), seed=1))", ""),
        ("copy-self-overlap", "(lambda t: t.narrow(0, 1, 3).copy_(t.narrow(0, 0, 3)))(otnd((4, 3)))",
         "chk_values(r, rnd((4, 3))[0:3])"),
        ("item-multi", "otnd((4, 3)).item()", ""),
        ("item-empty", "otnd((0,)).item()", ""),
        ("numpy-bf16", "opreg.empty((2,), 'bfloat16').numpy()", ""),
        ("numpy-meta", "opreg.empty((2,), 'float32', 'meta').numpy()", ""),
        ("new-empty-huge", "otnd((2,)).new_empty((2**62,))", ""),
        ("new-empty-neg", "otnd((2,)).new_empty((-3,))", ""),
        ("size-bad-dim", "otnd((4, 3)).size(7)", ""),
        ("contiguous-of-expanded", "opreg.from_dlpack(np.broadcast_to(rnd((1, 3)), (4, 3))).contiguous()",
         "chk_values(r, np.broadcast_to(rnd((1, 3)), (4, 3)))"),
        ("clone-meta", "opreg.empty((2,), 'float32', 'meta').clone()", "chk_accepted(r)"),
    ]
    must_refuse = {"copy-readonly-dst": "writing into a read-only NumPy array",
                   "copy-shape-mismatch": "copying a [3, 4] tensor into a [4, 3] one",
                   "item-multi": "item() of a 12-element tensor", "item-empty": "item() of an empty tensor",
                   "new-empty-neg": "a negative size", "size-bad-dim": "dim 7 of a 2-dim tensor",
                   "reshape-two-minus-one": "two -1 sizes", "reshape-wrong-numel": "15 elements for 12",
                   "reshape-huge": "0 elements for 12", "narrow-bad-dim": "dim 5 of a 2-dim tensor",
                   "select-bad-dim": "dim -3 of a 2-dim tensor"}
    for pid in ("narrow-huge-start", "narrow-negative-length", "narrow-overflow", "select-out-of-range",
                "select-negative"):
        must_refuse[pid] = "an out-of-range view (its elements lie outside the tensor's memory)"
    for pid, call, expect in calls:
        method = {"new": "new_empty", "item": "item(", "copy": "copy_"}.get(pid.split("-")[0], pid.split("-")[0])
        must = must_refuse.get(pid, "")
        if pid == "view-noncontiguous":
            expect = "chk_values(r, rnd((4, 3)).T.reshape(12))"
        g.add(Probe(id=f"tensor-methods/{pid}", surface="tensor-methods", call=call,
                    expect=expect or "chk_accepted(r)", must_refuse=must,
                    key=pid in ("narrow-overflow", "copy-readonly-dst", "reshape-huge"),
                    op_tokens=(method,), arg_tokens=()))


def python_probes(with_torch: bool) -> List[Probe]:
    g = Gen()
    gen_op_probes(g, FW_NUMPY)
    gen_op_probes(g, FW_OPREG)
    if with_torch:
        gen_op_probes(g, FW_TORCH)
        gen_op_probes(g, FW_TORCH_OPS)
    gen_op_lookup(g)
    gen_constructors(g)
    gen_tensor_methods(g)
    gen_schema_probes(g)
    gen_custom_op_probes(g)
    gen_load_library_probes(g)
    gen_symm_mem_probes(g)
    gen_unknown_ops(g)
    return g.probes


def gen_unknown_ops(g: Gen) -> None:
    """Ops opreg lists that OPS (references.py) has no entry for: garbage arguments only."""
    for name in frameworks.opreg.list_ops():
        ns, _, rest = name.partition("::")
        base, _, overload = rest.partition(".")
        if ns == "opreg" and base in OPS:
            continue
        if ns == "symm_mem" and overload:
            continue
        target = f"opreg.ops.{ns}.{base}" + (f".{overload}" if overload else "")
        for pid, args in (("no-args", ""), ("None", "None"), ("garbage", "'x', 2**63, float('nan')"),
                          ("numpy", "rnd((4,)), 'sum', 'no_such_group'")):
            g.add(Probe(id=f"{'symm_mem' if ns == 'symm_mem' else 'other-ops'}/{name}-{pid}",
                        surface="symm_mem" if ns == "symm_mem" else "other-ops",
                        call=f"{target}({args})", expect="'unchecked: accepted'",
                        op_tokens=(name.split(".")[0],), arg_tokens=()))
