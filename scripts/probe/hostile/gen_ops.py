"""Probes of the built-in ops (opreg.ops.opreg.<op> with NumPy, torch and opreg tensors, and
torch.ops.opreg.<op>): valid calls, wrong dtypes, odd shapes and layouts, hostile scalars,
torch views, out / written arguments and aliasing. OpCall assembles one call's source text."""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Optional, Sequence, Tuple

from .frameworks import np
from .model import Gen, Probe
from .references import OPS


@dataclasses.dataclass(frozen=True)
class Fw:
    """How a framework spells tensors in probe source text."""

    name: str          # numpy | torch | opreg | torch.ops
    surface: str
    target: str        # "o" (opreg.ops.opreg) or "T" (torch.ops.opreg)

    def mk(self, shape: Tuple[int, ...], dtype: str = "float32", seed: int = 0) -> str:
        if self.name == "numpy":
            return f"rnd({shape!r}, '{dtype}', {seed})"
        if self.name == "opreg":
            return f"otnd({shape!r}, '{dtype}', {seed})"
        return f"trnd({shape!r}, '{dtype}', {seed})"

    def zeros(self, shape: Tuple[int, ...], dtype: str = "float32") -> str:
        if self.name == "numpy":
            return f"np.zeros({shape!r}, '{dtype}')"
        if self.name == "opreg":
            return f"opreg.zeros({shape!r}, '{dtype}')"
        return f"torch.zeros({shape!r}, dtype=torch.{dtype})"

    @property
    def is_torch(self) -> bool:
        return self.name in ("torch", "torch.ops")


FW_NUMPY = Fw("numpy", "ops:numpy", "o")
FW_TORCH = Fw("torch", "ops:torch", "o")
FW_OPREG = Fw("opreg", "ops:opreg", "o")
FW_TORCH_OPS = Fw("torch.ops", "torch.ops", "T")


def tensor_shapes(op: str, X: Tuple[int, ...]) -> Dict[str, Tuple[int, ...]]:
    """Shapes of the op's tensor inputs that go with an input of shape X."""
    h = X[-1] if X else 1
    if op in ("rms_norm",):
        return {"input": X, "weight": (h,)}
    if op == "fused_add_rms_norm_":
        return {"input": X, "residual": X, "weight": (h,)}
    if op == "linear":
        return {"x": X, "weight": (6, h), "bias": (6,)}
    first = OPS[op].params[0].name
    return {p.name: X for p in OPS[op].params if p.kind == "Tensor" and p.name in (first, "other", "y")}


def out_shapes(op: str, X: Tuple[int, ...], dtype: str, k: int = 3) -> Dict[str, Tuple[Tuple[int, ...], str]]:
    rows = int(np.prod(X[:-1], dtype=np.int64)) if X else 1
    if op == "silu_and_mul":
        return {"out": (X[:-1] + (X[-1] // 2,), dtype)}
    if op == "per_token_quant":
        return {"q": (X, "int8"), "scale": ((rows, 1), "float32")}
    if op == "topk":
        return {"values": (X[:-1] + (k,), dtype), "indices": (X[:-1] + (k,), "int64")}
    if op == "linear":
        return {"out": (X[:-1] + (6,), dtype)}
    if op == "split_add":
        return {"out0": (X, dtype), "out1": (X, dtype)}
    return {"out": (X, dtype)} if OPS[op].outs else {}


SCALAR_BASE = {"add": {"alpha": "0.5"}, "rms_norm": {"eps": "1e-05"}, "fused_add_rms_norm_": {"eps": "1e-05"},
               "per_token_quant": {"dtype": "'int8'"}, "topk": {"k": "3"}, "softmax": {}, "linear": {},
               "mul": {}, "split_add": {}, "silu_and_mul": {}}


class OpCall:
    """A call of a built-in op, assembled from per-argument source text."""

    def __init__(self, fw: Fw, op: str, overload: str = "default", X: Tuple[int, ...] = (4, 8),
                 dtype: str = "float32") -> None:
        self.fw, self.op, self.overload, self.X, self.dtype = fw, op, overload, X, dtype
        self.setup = ""
        self.src: Dict[str, str] = {}
        for i, (name, shape) in enumerate(tensor_shapes(op, X).items()):
            self.src[name] = fw.mk(shape, dtype, i)
        self.src.update(SCALAR_BASE[op])
        if op == "topk" and X and X[-1] < 3:
            self.src["k"] = str(X[-1])
        if op == "per_token_quant" and fw.name == "torch.ops":
            self.src["dtype"] = "torch.int8"
        self.extra_args: List[str] = []
        self.extra_kwargs: List[Tuple[str, str]] = []
        self.drop: List[str] = []
        self.as_keywords = False
        if overload == "out":
            k = int(self.src.get("k", "3")) if op == "topk" else 3
            for name, (shape, odt) in out_shapes(op, X, dtype, k).items():
                self.src[name] = fw.zeros(shape, odt)

    def set(self, /, **src: str) -> "OpCall":
        self.src.update(src)
        return self

    def probe(self, pid: str, *, key: bool = False, must_refuse: str = "", arg: Sequence[str] = ()) -> Probe:
        sig = OPS[self.op].signature(self.overload)
        args: List[str] = []
        kwargs: List[Tuple[str, str]] = []
        gap = False  # a positional parameter left out: the ones after it go by keyword
        for prm in sig:
            if prm.name in self.drop or prm.name not in self.src:
                gap = gap or not prm.kwonly
                continue
            if prm.kwonly or self.as_keywords or gap:
                kwargs.append((prm.name, self.src[prm.name]))
            else:
                args.append(self.src[prm.name])
        args += self.extra_args
        kwargs += self.extra_kwargs
        target = f"{self.fw.target}.{self.op}" + (".out" if self.overload == "out" else "")
        qualified = f"opreg::{self.op}"
        tokens = (qualified, f"opreg.{self.op}", f"{self.op}(")
        return Probe(id=f"{self.fw.surface}/{self.op}{'.out' if self.overload == 'out' else ''}/{pid}",
                     surface=self.fw.surface, key=key, setup=self.setup, op=self.op,
                     overload=self.overload, target=target, args=tuple(args), kwargs=tuple(kwargs),
                     must_refuse=must_refuse, op_tokens=tokens,
                     arg_tokens=tuple(arg) or tuple(p.name for p in sig))


WRONG_DTYPES = {
    "numpy": ("bool", "int8", "uint16", "uint32", "int64", "uint64", "float64", "complex64"),
    "torch": ("bool", "int8", "uint16", "uint64", "float64", "complex64", "float8_e4m3fn"),
    "torch.ops": ("bool", "uint32", "int64", "float64", "complex64"),
    "opreg": ("bool", "int8", "uint64", "float64"),
}
VALID_DTYPES = {"numpy": ("float32", "float16"), "torch": ("float32", "float16", "bfloat16"),
                "torch.ops": ("float32", "bfloat16"), "opreg": ("float32", "float16")}

SCALAR_VALUES = {
    "Scalar": ("float('nan')", "float('inf')", "-float('inf')", "2**63", "-2**63-1", "2**63-1",
               "True", "1j", "'2'", "None", "1e308", "np.float32(2)", "np.int64(3)", "0"),
    "float": ("float('nan')", "float('inf')", "-1.0", "0.0", "1e308", "True", "'1e-6'", "None",
              "2**70", "np.float64(1e-5)", "5e-324", "-0.0", "1"),
    "int:k": ("-1", "0", "8", "9", "2**31", "2**62", "2**63-1", "-2**63", "2**63", "True", "1.5",
              "2.0", "'2'", "None", "np.int64(2)", "np.uint64(2**64-1)"),
    "int:dim": ("1", "-2", "2", "-3", "2**63-1", "-2**63", "2**31", "1.0", "None", "'0'", "True",
                "np.int32(0)"),
    "bool": ("False", "0", "1", "2", "'yes'", "None", "np.bool_(False)", "1.0"),
    "ScalarType": ("'int8'", "'i8'", "'float8_e4m3fn'", "'float32'", "'bogus'", "''", "None", "5",
                   "np.int8", "np.dtype('int8')", "'torch.int8'", "'uint8'", "'int8 '", "'x'*10**6"),
    "ScalarType:torch": ("torch.int8", "torch.float8_e4m3fn", "torch.float32", "'int8'", "None", "5"),
}
SCALAR_SUBSET = {  # torch.ops: fewer, the ones its parser sees differently
    "Scalar": ("float('nan')", "2**63", "True", "1j", "'2'", "None"),
    "float": ("float('nan')", "-1.0", "True", "'1e-6'", "None", "1"),
    "int:k": ("-1", "2**63-1", "2**63", "True", "1.5", "None"),
    "int:dim": ("2", "-2**63", "1.0", "None", "True"),
    "bool": ("2", "'yes'", "None", "1"),
}


def _first_tensor(op: str) -> str:
    return OPS[op].params[0].name


def _second_tensor(op: str) -> Optional[str]:
    names = [p.name for p in OPS[op].params if p.kind == "Tensor"]
    return names[1] if len(names) > 1 else None


# Ops swept in depth per framework (every dtype, layout, argument kind); the others get the
# core probes (valid, a wrong dtype, 0-dim, zero-size, transposed, huge, outs and aliasing).
DEEP_OPS = {
    "numpy": ("add", "fused_add_rms_norm_"),
    "torch": ("add", "fused_add_rms_norm_"),
    "torch.ops": ("add", "fused_add_rms_norm_"),
    "opreg": ("add",),
}
# Scalar arguments swept through every hostile value; the others get the first few.
DEEP_SCALARS = {("add", "alpha"), ("rms_norm", "eps"), ("per_token_quant", "dtype"), ("topk", "k"),
                ("topk", "largest"), ("softmax", "dim")}
CORE_WRONG_DTYPES = {"numpy": ("int8", "float64"), "torch": ("float64",), "torch.ops": ("int64",),
                     "opreg": ("float64",)}


def gen_op_probes(g: Gen, fw: Fw) -> None:
    for op in OPS:
        deep = op in DEEP_OPS[fw.name]
        gen_inputs(g, fw, op, deep)
        if fw.name in ("numpy", "torch.ops"):
            gen_scalars(g, fw, op)
        if fw.name in ("numpy", "torch.ops"):
            gen_call_shapes(g, fw, op, deep)
        if fw.is_torch:
            gen_torch_views(g, fw, op, deep)
        if OPS[op].outs or OPS[op].writes:
            gen_written(g, fw, op, deep)


def gen_inputs(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """Valid calls, wrong dtypes, odd shapes and layouts of the tensor inputs."""
    first, second = _first_tensor(op), _second_tensor(op)
    h = 8
    numpy = fw.name == "numpy"
    for i, dt in enumerate(VALID_DTYPES[fw.name] if deep else VALID_DTYPES[fw.name][:1]):
        g.add(OpCall(fw, op, dtype=dt).probe(f"valid-{dt}", key=i == 0))
    for dt in WRONG_DTYPES[fw.name] if deep else CORE_WRONG_DTYPES[fw.name][:1]:
        g.add(OpCall(fw, op).set(**{first: fw.mk((4, 8), dt)}).probe(f"dtype-{first}-{dt}", arg=(first, "dtype")))
    if second:
        shape = tensor_shapes(op, (4, 8))[second]
        if deep:
            g.add(OpCall(fw, op).set(**{second: fw.mk(shape, "float16", 1)}).probe(f"dtype-{second}-float16", arg=(second,)))
        g.add(OpCall(fw, op).set(**{second: fw.mk((3, 5), "float32", 1)}).probe("shape-mismatch", key=numpy))
    if fw.name == "opreg":
        g.add(OpCall(fw, op, X=(0, 8)).probe("zero-rows"))
        g.add(OpCall(fw, op).set(**{first: "otnd((8, 4)).view((4, 8))"}).probe("view"))
        if deep:
            g.add(OpCall(fw, op).set(**{first: "opreg.from_dlpack(rnd((4, 16))[:, ::2])"}).probe("step-2"))
            g.add(OpCall(fw, op).set(**{first: "otnd((2, 4, 8)).select(0, 1)"}).probe("select-view"))
        return
    g.add(OpCall(fw, op, X=()).probe("0-dim", key=numpy))
    t = ".T" if numpy else ".t()"
    if numpy or deep:
        g.add(OpCall(fw, op, X=(0, 8)).probe("zero-rows", key=numpy))
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((h, 4))}{t}"}).probe("transposed", key=numpy))
    huge = (f"np.broadcast_to({fw.mk((1, 1))}, (2**30, 2**30))", "huge-expanded-2**60") if numpy else \
        (f"{fw.mk((1, 1))}.expand(2**31, 2**31)", "huge-expanded-2**62")
    g.add(OpCall(fw, op).set(**{first: huge[0]}).probe(huge[1], key=True))
    if numpy:
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, h))}[::-1]"}).probe("negative-strides", key=True))
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, h))}.astype('>f4')"}).probe("big-endian", key=True))
    if not deep:
        return
    g.add(OpCall(fw, op, X=(4, 0)).probe("zero-cols"))
    g.add(OpCall(fw, op, X=(2, 0, 8)).probe("zero-middle"))
    g.add(OpCall(fw, op, X=(1, 1, 1, 1, 1, 2, 3, 8)).probe("8-dim"))
    g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, 2 * h))}[:, ::2]"}).probe("step-2"))
    g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, 2 * h))}[:, 1::2]"}).probe("offset-step-2"))
    if numpy:
        g.add(OpCall(fw, op).set(**{first: f"np.broadcast_to({fw.mk((1, h))}, (4, {h}))"}).probe("expanded-stride-0"))
        g.add(OpCall(fw, op).set(**{first: f"np.broadcast_to({fw.mk((1, h))}, (2**40, {h}))"})
              .probe("huge-expanded-rows"))
        g.add(OpCall(fw, op).set(**{n: f"ro({s})" for n, s in OpCall(fw, op).src.items()
                                    if n in tensor_shapes(op, (4, 8))}).probe("read-only-inputs"))
        g.add(OpCall(fw, op).set(**{first: "misaligned((4, 8))"}).probe("misaligned"))
        g.add(OpCall(fw, op).set(**{first: "np.asfortranarray(rnd((4, 8)))"}).probe("fortran-order"))
        g.add(OpCall(fw, op).set(**{first: f"nanify({fw.mk((4, h))})"}).probe("nan-inf-values"))
        if second:
            shape = tensor_shapes(op, (4, 8))[second]
            g.add(OpCall(fw, op).set(**{second: fw.mk(shape, "float64", 1)}).probe(f"dtype-{second}-float64", arg=(second,)))
    else:
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((1, h))}.expand(4, {h})"}).probe("expanded-stride-0"))
        g.add(OpCall(fw, op).set(**{first: f"nanify({fw.mk((4, h))})"}).probe("nan-inf-values"))
        g.add(OpCall(fw, op).set(**{first: f"{fw.mk((4, h))}.requires_grad_()"}).probe("requires-grad"))


def gen_call_shapes(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """Wrong numbers / kinds of arguments."""
    first = _first_tensor(op)
    g.add(OpCall(fw, op).set(**{first: "None"}).probe(f"{first}=None", arg=(first,)))
    if fw.name == "numpy" or deep:
        c = OpCall(fw, op)
        c.extra_args = ["1", "2", "3", "4"]
        g.add(c.probe("too-many-positional", arg=("positional", "argument", "arguments")))
    if op == "silu_and_mul":
        g.add(OpCall(fw, op, X=(4, 7)).probe("odd-last-dim", arg=("x",)))
    if op == "linear":
        g.add(OpCall(fw, op).set(bias="None").probe("bias-None"))
        g.add(OpCall(fw, op).set(bias=fw.mk((5,), "float32", 2)).probe("bias-wrong-shape", arg=("bias",)))
    if op == "mul":
        g.add(OpCall(fw, op).set(other=fw.mk((4, 1), "float32", 1)).probe("broadcast-col"))
    if not deep:
        return
    c = OpCall(fw, op)
    c.drop = [p.name for p in OPS[op].params]
    g.add(c.probe("no-arguments", arg=(first, "argument")))
    c = OpCall(fw, op)
    c.extra_kwargs = [("bogus", "1")]
    g.add(c.probe("unknown-keyword", arg=("bogus",)))
    c = OpCall(fw, op)
    c.extra_kwargs = [(first, c.src[first])]
    g.add(c.probe("duplicate-argument", arg=(first,)))
    c = OpCall(fw, op)
    c.as_keywords = True
    g.add(c.probe("all-by-keyword"))
    for what in ("'tensor'", "[[1.0] * 8] * 4", "1.0", "object()"):
        g.add(OpCall(fw, op).set(**{first: what}).probe(f"{first}={what}", arg=(first,)))
    if op == "add":
        c = OpCall(fw, op)
        c.src.pop("alpha")
        c.extra_args = ["2"]
        g.add(c.probe("kwonly-alpha-positional", arg=("positional", "argument", "arguments", "alpha")))
        g.add(OpCall(fw, op).set(other=fw.mk((8,), "float32", 1)).probe("broadcast-row"))


def gen_scalars(g: Gen, fw: Fw, op: str) -> None:
    """Hostile values of the non-tensor arguments."""
    table = SCALAR_VALUES if fw.name == "numpy" else SCALAR_SUBSET
    for prm in OPS[op].params:
        if prm.kind in ("Tensor", "Tensor?"):
            continue
        kind = prm.kind
        if kind == "int":
            kind = f"int:{'k' if prm.name == 'k' else 'dim'}"
        if kind == "ScalarType" and fw.name == "torch.ops":
            kind = "ScalarType:torch"
        values = table.get(kind, ())
        deep = (op, prm.name) in DEEP_SCALARS
        for v in values if deep else values[:4 if fw.name == "numpy" else 2]:
            key = v in ("float('nan')", "2**63-1", "1.5", "'bogus'", "-2**63")
            g.add(OpCall(fw, op).set(**{prm.name: v}).probe(f"{prm.name}={v[:24]}", key=key, arg=(prm.name,)))


def gen_torch_views(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """torch-only inputs: conj / neg views, meta tensors, device mixes."""
    first, second = _first_tensor(op), _second_tensor(op)
    shapes = tensor_shapes(op, (4, 8))
    g.add(OpCall(fw, op).set(**{first: f"torch._neg_view({fw.mk((4, 8))})"}).probe("neg-view", key=True, arg=(first,)))
    g.add(OpCall(fw, op).set(**{first: "zcplx((4, 8)).conj().imag"}).probe("conj-imag", key=True, arg=(first,)))
    g.add(OpCall(fw, op).set(**{first: "trnd((4, 8), device='meta')"})
          .probe("meta-first-cpu-rest", key=fw.name == "torch",
                 must_refuse="" if len(shapes) == 1 else "a meta tensor with CPU tensors"))
    if not deep:
        return
    g.add(OpCall(fw, op).set(**{first: "zcplx((4, 8)).conj()"}).probe("conj-complex", arg=(first,)))
    g.add(OpCall(fw, op).set(**{first: "zcplx((4, 8)).conj().real"}).probe("conj-real"))
    if second:
        g.add(OpCall(fw, op).set(**{second: f"torch._neg_view({fw.mk(shapes[second], 'float32', 1)})"})
              .probe(f"neg-view-{second}", key=fw.name == "torch", arg=(second,)))
    meta = OpCall(fw, op)
    for n, s in shapes.items():
        meta.src[n] = f"trnd({s!r}, device='meta')"
    g.add(meta.probe("meta-all"))


def gen_written(g: Gen, fw: Fw, op: str, deep: bool) -> None:
    """Out arguments (the .out overload) and in-place written arguments."""
    inplace = bool(OPS[op].writes)
    overload = "default" if inplace else "out"
    written = OPS[op].written(overload)
    w0 = written[0]
    first = _first_tensor(op)
    if not inplace:
        g.add(OpCall(fw, op, overload).probe("valid-out", key=fw.name != "opreg"))
    if fw.name == "opreg":
        if deep:
            g.add(OpCall(fw, op, overload).set(**{w0: fw.zeros((5, 5), "float32")}).probe(f"{w0}-wrong-shape", arg=(w0,)))
        return
    shape0 = tensor_shapes(op, (4, 8))[first] if inplace else out_shapes(op, (4, 8), "float32")[w0][0]
    dtype0 = "float32" if inplace else out_shapes(op, (4, 8), "float32")[w0][1]
    mk0 = (lambda s: fw.mk(s, dtype0)) if inplace else (lambda s: fw.zeros(s, dtype0))
    t = ".T" if fw.name == "numpy" else ".t()"
    if len(shape0) == 2 and deep:
        g.add(OpCall(fw, op, overload).set(**{w0: f"{mk0(shape0[::-1])}{t}"}).probe(f"{w0}-transposed", arg=(w0,)))
    if fw.name == "numpy":
        g.add(OpCall(fw, op, overload).set(**{w0: f"ro({OpCall(fw, op, overload).src[w0]})"})
              .probe(f"{w0}-read-only", key=True, must_refuse="a read-only array as a written argument", arg=(w0,)))
    else:
        if len(shape0) == 2 and deep:
            g.add(OpCall(fw, op, overload).set(**{w0: f"{mk0((1, shape0[1]))}.expand{shape0!r}"})
                  .probe(f"{w0}-expanded-stride-0", key=fw.name == "torch", arg=(w0,)))
        g.add(OpCall(fw, op, overload).set(**{w0: f"torch._neg_view({mk0(shape0)})"})
              .probe(f"{w0}-neg-view", key=True, arg=(w0,)))
    gen_aliasing(g, fw, op, overload, written, deep)
    if not deep:
        return
    wrong_dt = "float64" if dtype0 != "float64" else "float32"
    g.add(OpCall(fw, op, overload).set(**{w0: mk0(shape0).replace(dtype0, wrong_dt)}).probe(f"{w0}-dtype-{wrong_dt}", arg=(w0,)))
    g.add(OpCall(fw, op, overload).set(**{w0: mk0((5,) + shape0[1:])}).probe(f"{w0}-wrong-shape", arg=(w0,)))
    g.add(OpCall(fw, op, overload).set(**{w0: mk0(())}).probe(f"{w0}-0-dim", arg=(w0,)))
    if len(shape0) == 2:
        g.add(OpCall(fw, op, overload).set(**{w0: f"{mk0((shape0[0], 2 * shape0[1]))}[:, ::2]"})
              .probe(f"{w0}-step-2", arg=(w0,)))
    if fw.name == "numpy":
        if len(written) > 1:
            w1 = written[1]
            g.add(OpCall(fw, op, overload).set(**{w1: f"ro({OpCall(fw, op, overload).src[w1]})"})
                  .probe(f"{w1}-read-only", must_refuse="a read-only array as a written argument", arg=(w1,)))
        g.add(OpCall(fw, op, overload).set(**{w0: f"np.broadcast_to({mk0((1,) + shape0[1:])}, {shape0!r})"})
              .probe(f"{w0}-broadcast-view", must_refuse="a read-only broadcast view as a written argument", arg=(w0,)))
    elif not inplace:
        g.add(OpCall(fw, op, overload).set(**{w0: f"torch.empty({shape0!r}, dtype=torch.{dtype0}, device='meta')"})
              .probe(f"{w0}-meta", must_refuse="a meta out with CPU inputs", arg=(w0,)))
    if not inplace:
        g.add(OpCall(fw, op, overload).set(**{w0: "None"}).probe(f"{w0}-None", arg=(w0,)))
        c = OpCall(fw, op, overload)
        c.drop = list(written)
        g.add(c.probe("outs-missing", arg=written))


def gen_aliasing(g: Gen, fw: Fw, op: str, overload: str, written: Sequence[str], deep: bool) -> None:
    """Written arguments that are, or partially overlap, another argument."""
    first = _first_tensor(op)
    inplace = overload == "default"
    shapes = tensor_shapes(op, (4, 8))
    outs = {} if inplace else out_shapes(op, (4, 8), "float32")
    w0 = written[0]
    same_as_input = inplace or outs[w0] == (shapes[first], "float32")
    flat = "np.ascontiguousarray(rnd((64,)))" if fw.name == "numpy" else "trnd((64,))"
    if same_as_input and (deep or fw.name == "numpy"):
        # Exactly the input.
        c = OpCall(fw, op, overload)
        c.setup = f"a = {fw.mk(shapes[first])}"
        c.set(**{first: "a", (written[1] if inplace else w0): "a"})
        g.add(c.probe(f"{'residual' if inplace else w0}-is-{first}", key=True, arg=(w0, first) + tuple(written)))
    if same_as_input:
        # The same memory as the input, through another array / tensor object.
        target = written[1] if inplace else w0
        c = OpCall(fw, op, overload)
        c.setup = f"a = {fw.mk(shapes[first])}"
        c.set(**{first: "a", target: "a[:]"})
        g.add(c.probe(f"{target}-is-view-of-{first}", key=True, arg=(w0, first) + tuple(written)))
        # Shifted by 4 elements inside one buffer.
        c = OpCall(fw, op, overload)
        c.setup = f"buf = {flat}"
        c.set(**{first: "buf[:32].reshape(4, 8)", (written[1] if inplace else w0): "buf[4:36].reshape(4, 8)"})
        g.add(c.probe(f"{'residual' if inplace else w0}-overlaps-{first}-shifted", key=True,
                      arg=(w0, first) + tuple(written)))
    second = _second_tensor(op)
    if second and shapes.get(second) == shapes[first] and not inplace and deep:
        c = OpCall(fw, op, overload)
        c.setup = f"buf = {flat}"
        c.set(**{second: "buf[:32].reshape(4, 8)", w0: "buf[8:40].reshape(4, 8)"})
        g.add(c.probe(f"{w0}-overlaps-{second}-shifted", arg=(w0, second)))
    if len(written) > 1 and not inplace and outs[written[0]] == outs[written[1]]:
        c = OpCall(fw, op, overload)
        c.setup = f"b = {fw.zeros(outs[w0][0], outs[w0][1])}"
        c.set(**{written[0]: "b", written[1]: "b"})
        g.add(c.probe("two-outs-same-tensor", key=fw.name == "numpy", arg=tuple(written)))
        c = OpCall(fw, op, overload)
        c.setup = f"b = {fw.zeros(outs[w0][0], outs[w0][1])}"
        c.set(**{written[0]: "b", written[1]: "b[:]"})
        g.add(c.probe("two-outs-same-memory", key=True, arg=tuple(written)))
    if inplace:
        c = OpCall(fw, op, overload)
        c.setup = f"buf = {flat}"
        c.set(input="buf[:32].reshape(4, 8)", weight="buf[:8]")
        g.add(c.probe("weight-inside-input", arg=("weight", "input")))
        t = ".T" if fw.name == "numpy" else ".t()"
        c = OpCall(fw, op, overload).set(input=f"{fw.mk((8, 4))}{t}")
        g.add(c.probe("input-transposed", arg=("input",)))
