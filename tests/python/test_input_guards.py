"""Regression tests for what the hostile-input probe (scripts/probe/hostile_inputs.py) found on
2026-11-28: each case crashed, hung or was silently wrong before its fix, and must now give the
right result or a clear error."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import opreg

o = opreg.ops.opreg


def test_full_and_arange_refuse_values_the_dtype_cannot_hold():
    for args, dtype in [((3,), 300), ((3,), -129), ((3,), 2**63), ((3,), float("nan"))]:
        with pytest.raises(ValueError, match=r"full\(\): value .* cannot be converted to type"):
            opreg.full(args, dtype, "int8" if dtype != 2**63 else "int64")
    with pytest.raises(ValueError, match=r"arange\(\): last element: value 199"):
        opreg.arange(200, "int8")
    with pytest.raises(ValueError, match="cannot be converted to type f32"):
        opreg.full((2,), 1e39, "float32")
    # What torch takes: truncation, exact integers past 2^53 (torch wraps -1 into uint8; opreg
    # refuses it, as NumPy does).
    assert opreg.full((2,), 1.5, "int32").numpy().tolist() == [1, 1]
    with pytest.raises(ValueError, match="cannot be converted to type u8"):
        opreg.full((2,), -1, "uint8")
    assert opreg.full((1,), 2**53 + 1, "int64").numpy().tolist() == [2**53 + 1]
    assert opreg.full((1,), 2**70, "float32").numpy()[0] == np.float32(2.0**70)


def test_memory_lent_read_only_stays_read_only():
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    t = opreg.from_dlpack(ro)
    with pytest.raises(ValueError, match=r"copy_\(\): the destination's memory is read-only"):
        t.copy_(opreg.ones((3,)))
    with pytest.raises(ValueError, match=r"argument 'out' \(#2\): expected a writable tensor"):
        o.mul.out(np.ones(3, np.float32), np.ones(3, np.float32), out=t)
    assert not t.numpy().flags.writeable
    assert ro.tolist() == [0, 0, 0]
    # Reading it is fine.
    assert o.add(t, t).numpy().tolist() == [0, 0, 0]


def test_one_buffer_passed_as_two_arguments_is_seen_to_alias():
    x = np.ones((2, 3), np.float32)
    y = np.full((2, 3), 2, np.float32)
    b = np.zeros((2, 3), np.float32)
    # out0 and out1 over the same memory through two objects (each imported separately).
    with pytest.raises(ValueError, match="shares its memory"):
        o.split_add.out(x, y, out0=b, out1=b[:])
    with pytest.raises(ValueError, match="shares its memory"):
        o.split_add.out(x, y, out0=x[:], out1=b)
    with pytest.raises(ValueError, match="shares its memory"):
        o.fused_add_rms_norm_(x, x[:], np.ones(3, np.float32), 1e-6)
    assert x.tolist() == [[1, 1, 1], [1, 1, 1]]


def test_load_library_says_what_the_path_is(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="is not a regular file"):
        opreg.load_library(fifo)  # dlopen would have blocked on it
    with pytest.raises(IsADirectoryError, match="is a directory, not a library"):
        opreg.load_library(tmp_path)
    with pytest.raises(OSError, match="is not a regular file"):
        opreg.load_library("/dev/zero")
    with pytest.raises(FileNotFoundError, match="no such library"):
        opreg.load_library(tmp_path / "missing.so")
    with pytest.raises(ValueError, match="NUL byte"):
        opreg.load_library("lib\0.so")
    with pytest.raises(TypeError, match="expected a path"):
        opreg.load_library(42)


def test_symmetric_memory_group_names_are_bounded(tmp_path):
    with pytest.raises(ValueError, match="the group name is 100000 bytes long; at most 128"):
        opreg.symm_mem.create_group("g" * 100000, 0, 1, tmp_path / "store", timeout_s=5)


torch = pytest.importorskip("torch", reason="torch is not installed: the neg-view cases need it")


def test_negated_written_argument_is_refused_by_opreg_ops():
    a = torch.arange(6.0).reshape(2, 3)
    out = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"\[opreg::mul.out\] argument 'out' \(#2\): .* lazily "
                                         r"negated view"):
        o.mul.out(a, a, out=torch._neg_view(out))
    assert out.tolist() == [[0, 0, 0], [0, 0, 0]]


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference_mode"])
def test_negated_views_through_torch_ops_give_torch_results(mode: str):
    # A negated `out` crashed the process at exit (torch's neg fallback asserted on opreg's
    # `-> ()` companion op); each case runs in a fresh process so a crash is seen as one.
    code = f"""
import torch, opreg.torch
ctx = {{"grad": torch.enable_grad, "no_grad": torch.no_grad,
        "inference_mode": torch.inference_mode}}["{mode}"]
a, b = torch.randn(4, 8), torch.randn(4, 8)
with ctx():
    base = torch.zeros(4, 8)
    r = torch.ops.opreg.mul.out(a, b, out=torch._neg_view(base))
    assert torch.equal(base, -(a * b)), "mul.out into a negated view"
    y = torch.ops.opreg.mul(torch._neg_view(a), b)
    assert torch.equal(y, -a * b), "a negated input"
    x, rb = torch.randn(4, 8), torch.randn(4, 8)
    x0, rb0 = x.clone(), rb.clone()
    torch.ops.opreg.fused_add_rms_norm_(x, torch._neg_view(rb), torch.ones(8), 1e-6)
    residual = x0 - rb0  # input + the negated view's values
    assert torch.allclose(rb, -residual), "the residual written through the negated view"
    ref = residual * torch.rsqrt(residual.pow(2).mean(-1, keepdim=True) + 1e-6)
    assert torch.allclose(x, ref, atol=1e-5), "the normalized input"
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr[-3000:]
