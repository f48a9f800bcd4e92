"""Hostile schema texts, shared by the Python schema probes and `opreg schema` (CLI) probes.
"{i}" in a text stands for its index; SCHEMA_TEXTS has it replaced (probes name them by
index, so that repro lines stay short)."""
from __future__ import annotations

from typing import List, Tuple


HOSTILE_SCHEMAS: List[Tuple[str, str]] = [
    ("valid", "hx{i}(Tensor x, int k=2) -> Tensor"),
    ("valid-mutating", "hx{i}(Tensor(a!) x) -> ()"),
    ("empty", ""),
    ("truncated-args", "hx{i}(Tensor x"),
    ("truncated-arrow", "hx{i}(Tensor x) ->"),
    ("truncated-type", "hx{i}(Ten"),
    ("only-paren", "("),
    ("no-name", "(Tensor x) -> Tensor"),
    ("digit-name", "1hx{i}(Tensor x) -> Tensor"),
    ("unicode-name", "hë{i}(Tensor x) -> Tensor"),
    ("cjk-name", "名前{i}(Tensor x) -> Tensor"),
    ("unicode-arg", "hx{i}(Tensor ẍ) -> Tensor"),
    ("long-name-1e6", "h{i}" + "x" * 10**6 + "(Tensor x) -> Tensor"),
    ("long-arg-1e6", "hx{i}(Tensor " + "y" * 10**6 + ") -> Tensor"),
    ("many-args-1e5", "hx{i}(" + ", ".join(f"Tensor a{j}" for j in range(100000)) + ") -> ()"),
    ("dup-args", "hx{i}(Tensor x, Tensor x) -> Tensor"),
    ("dup-returns", "hx{i}(Tensor x) -> (Tensor a, Tensor a)"),
    ("alias-unclosed", "hx{i}(Tensor(a! x) -> Tensor"),
    ("alias-empty", "hx{i}(Tensor(!) x) -> Tensor"),
    ("alias-twice-written", "hx{i}(Tensor(a!) x, Tensor(a!) y) -> Tensor(a!)"),
    ("alias-arrow", "hx{i}(Tensor(a -> b) x) -> Tensor"),
    ("alias-star", "hx{i}(Tensor(*) x) -> Tensor"),
    ("alias-on-int", "hx{i}(int(a!) x) -> ()"),
    ("alias-return-unknown", "hx{i}(Tensor x) -> Tensor(z!)"),
    ("int-default-overflow", "hx{i}(int x=99999999999999999999999) -> ()"),
    ("float-default-1e400", "hx{i}(float x=1e400) -> ()"),
    ("float-default-nan", "hx{i}(float x=nan) -> ()"),
    ("str-default-unterminated", "hx{i}(str s='abc) -> ()"),
    ("str-default-escapes", "hx{i}(str s='\\x00\\n\\u1234') -> ()"),
    ("list-size-huge", "hx{i}(int[99999999999999999999] x) -> ()"),
    ("list-size-2**62", "hx{i}(int[4611686018427387904] x=1) -> ()"),
    ("list-size-negative", "hx{i}(int[-2] x) -> ()"),
    ("default-before-required", "hx{i}(Tensor? x=None, Tensor y) -> ()"),
    ("double-star", "hx{i}(*, *, Tensor x) -> ()"),
    ("trailing-star", "hx{i}(Tensor x, *) -> ()"),
    ("nul-in-name", "hx{i}\0(Tensor x) -> ()"),
    ("newline-inside", "hx{i}(Tensor x)\n -> Tensor"),
    ("two-dots", "hx{i}.a.b(Tensor x) -> ()"),
    ("empty-overload", "hx{i}.(Tensor x) -> ()"),
    ("empty-namespace", "::hx{i}(Tensor x) -> ()"),
    ("other-namespace", "otherns{i}::hx{i}(Tensor x) -> ()"),
    ("unknown-type", "hx{i}(Tensr x) -> ()"),
    ("list-of-list", "hx{i}(Tensor[][][] x) -> ()"),
    ("optional-chain", "hx{i}(Tensor" + "?" * 1000 + " x) -> ()"),
    ("list-chain-1e5", "hx{i}(Tensor" + "[]" * 100000 + " x) -> ()"),
    ("paren-nesting-1e5", "hx{i}(" + "(" * 100000),
    ("return-nesting-1e5", "hx{i}(Tensor x) -> " + "(" * 100000),
    ("tuple-nesting-200", "hx{i}(Tensor x) -> " + "(" * 200 + "Tensor" + ")" * 200),
    ("dict-nesting-1e4", "hx{i}(" + "Dict(str, " * 10000 + "Tensor" + ")" * 10000 + " x) -> ()"),
    ("list-default-nesting-1e5", "hx{i}(int[] x=" + "[" * 100000 + ") -> ()"),
    ("future-nesting", "hx{i}(" + "Future(" * 5000 + "Tensor" + ")" * 5000 + " x) -> ()"),
    ("junk-1e6", "x" * 10**6),
    ("junk-binary", "hx{i}(\xff\xfe\x01)"),
    ("vararg", "hx{i}(...) -> ..."),
    ("keyword-as-name", "hx{i}(Tensor Tensor) -> ()"),
    ("whitespace-only", " \t "),
]


SCHEMA_TEXTS = [text.replace("{i}", str(i)) for i, (_, text) in enumerate(HOSTILE_SCHEMAS)]
