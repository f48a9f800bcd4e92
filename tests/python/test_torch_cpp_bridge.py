"""opreg.torch's C++ kernels: torch's dispatcher calling opreg through the stable C ABI with no
Python frame (where the argument types allow), results and errors as the Python kernels give,
every value kind, threads, references and reused argument objects. (The Python-level behaviour
of torch ops is in test_torch_bridge.py.)"""
import itertools

import numpy as np
import pytest

import opreg

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch)")

import opreg.torch as opreg_torch  # noqa: E402

needs_ops = pytest.mark.skipif("opreg::add" not in opreg.list_ops(),
                               reason="opreg::ops not linked in this build")
_ns = itertools.count()


def _torch_has_stable_from_blob():
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 11)


@needs_ops
def test_builtin_ops_get_cpp_kernels_where_torch_allows():
    why_not = opreg_torch._kernels.C_BRIDGE_UNAVAILABLE
    if not _torch_has_stable_from_blob():
        assert "2.11" in why_not, why_not
        return
    if why_not == "OPREG_TORCH_PYTHON_KERNELS=1":
        pytest.skip("OPREG_TORCH_PYTHON_KERNELS=1 forces Python kernels")
    assert why_not == ""
    python = opreg_torch.python_kernels()
    for name in ("opreg::rms_norm", "opreg::linear", "opreg::topk", "opreg::per_token_quant"):
        assert name not in python, (name, python[name])
    for name, why in python.items():
        assert why, name
    if opreg_torch._kernels.BRIDGE == "stable":
        # Scalar is not in torch's stable C ABI: opreg::add (Scalar alpha) keeps a Python kernel.
        assert "Scalar" in python["opreg::add"]
    else:  # the native bridge carries every argument type
        assert opreg_torch._kernels.BRIDGE == "native"
        assert not any(name.startswith("opreg::") for name in python), python
    # str (a symmetric-memory group's name) is: those ops get C++ kernels.
    for name in ("symm_mem::fused_all_reduce_add_rms_norm_", "symm_mem::all_gather_out"):
        if name in opreg_torch.registered():
            assert name not in python, (name, python[name])


_AGREE_SCRIPT = r"""
import sys, torch, opreg, opreg.torch
g = torch.Generator().manual_seed(0)
x = torch.randn(5, 16, generator=g)
w = torch.rand(16, generator=g) + 0.5
b = torch.randn(7, 16, generator=g)
outs = {
    "rms_norm": torch.ops.opreg.rms_norm(x, w, 1e-6),
    "linear": torch.ops.opreg.linear(x, b, None),
    "silu_and_mul": torch.ops.opreg.silu_and_mul(torch.cat([x, x * 2], -1)),
    "softmax": torch.ops.opreg.softmax(x, -1),
    "topk": torch.ops.opreg.topk(x, 3, -1),
    "per_token_quant": torch.ops.opreg.per_token_quant(x, torch.int8),
    "split_add": torch.ops.opreg.split_add(x, x),
    "add": torch.ops.opreg.add(x, x, alpha=2),
}
inplace = x.clone()
residual = x.clone() * 3
torch.ops.opreg.fused_add_rms_norm_(inplace, residual, w, 1e-6)
outs["fused_add_rms_norm_"] = (inplace, residual)
outs["python_kernels"] = sorted(opreg.torch.python_kernels())
torch.save(outs, sys.argv[1])
"""


@needs_ops
def test_cpp_and_python_kernels_agree(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "agree.py"
    script.write_text(_AGREE_SCRIPT)
    results = {}
    # "cpp": the native bridge where it was built for this torch, else the stable one.
    for mode in ("cpp", "stable", "python"):
        env = dict(os.environ)
        env.pop("OPREG_TORCH_PYTHON_KERNELS", None)
        env.pop("OPREG_TORCH_BRIDGE", None)
        if mode == "python":
            env["OPREG_TORCH_PYTHON_KERNELS"] = "1"
        if mode == "stable":
            env["OPREG_TORCH_BRIDGE"] = "stable"
        out = tmp_path / f"{mode}.pt"
        subprocess.run([sys.executable, str(script), str(out)], env=env, check=True, timeout=300)
        results[mode] = torch.load(out)
    cpp, python = results["cpp"], results["python"]
    if _torch_has_stable_from_blob():
        assert "opreg::rms_norm" not in cpp["python_kernels"]
    assert "opreg::rms_norm" in python["python_kernels"]
    for name in cpp:
        if name != "python_kernels":
            torch.testing.assert_close(cpp[name], python[name], rtol=0, atol=0, msg=name)
            torch.testing.assert_close(results["stable"][name], python[name], rtol=0, atol=0,
                                       msg=name)


def _mix_library():
    ns = f"cpp_bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("mix(Tensor x, Tensor? y=None, int? k=None, float s=1.0, bool flag=False, "
               "ScalarType? dt=None, SymInt n=0) -> (Tensor, int, float, bool, ScalarType)")

    def mix(x, y, k, s, flag, dt, n):
        out = np.asarray(x) * s + (np.asarray(y) if y is not None else 0) + n
        return out, -1 if k is None else 2 * k, s / 2, not flag, 5 if dt is None else dt

    lib.impl("mix", mix, "CPU")
    lib.register_fake("mix", lambda x, *rest: (x.new_empty(x.shape), 0, 0.0, False, 0))
    return ns, lib


def test_every_value_kind_crosses_the_cpp_bridge():
    ns, lib = _mix_library()
    op = getattr(getattr(torch.ops, ns), "mix")
    if _torch_has_stable_from_blob() and not opreg_torch._kernels.C_BRIDGE_UNAVAILABLE:
        assert f"{ns}::mix" not in opreg_torch.python_kernels()
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t, k, s, flag, dt = op(x)
    torch.testing.assert_close(t, x)
    # torch.ops returns a ScalarType as its code, as for aten ops (aten::result_type: 6).
    assert (k, s, flag, dt) == (-1, 0.5, True, 5)
    y = torch.ones(2, 3)
    t, k, s, flag, dt = op(x, y, 4, 3.0, True, torch.bfloat16, 10)
    torch.testing.assert_close(t, x * 3 + 1 + 10)
    assert (k, s, flag, dt) == (8, 1.5, False, 15)  # bfloat16's code
    # A non-contiguous view keeps its strides; the result owns fresh memory.
    v = x.t()
    t, *_ = op(v, None, None, 2.0)
    torch.testing.assert_close(t, v * 2)
    with pytest.raises((TypeError, ValueError, RuntimeError),
                       match=rf"\[{ns}::mix\] argument 'x' \(#0\)"):
        op(torch.ones(2, dtype=torch.complex64))
    lib._destroy()


def _bridge_expected():
    return _torch_has_stable_from_blob() and not opreg_torch._kernels.C_BRIDGE_UNAVAILABLE


def _bridged_op(schema, kernel):
    """A new op of `schema` with the CPU kernel `kernel`, as (namespace, Library, torch op);
    checks that the torch op got the C++ kernel where this torch has the bridge."""
    ns = f"cpp_bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define(schema)
    name = schema.split("(", 1)[0]
    lib.impl(name, kernel, "CPU")
    op = getattr(getattr(torch.ops, ns), name)
    if _bridge_expected():
        assert f"{ns}::{name}" not in opreg_torch.python_kernels()
    return ns, lib, op


def test_lists_strings_and_devices_cross_the_cpp_bridge():
    # torch's stable ABI carries lists (a list handle of items), strings and devices too, so an op
    # with such arguments and returns gets the C++ kernel; written tensor lists are bumped.
    seen = {}

    def lists(xs, ys, sizes, scales, flags, tag, note, dev, maybe, outs):
        seen.update(ys=[None if y is None else np.asarray(y).tolist() for y in ys], sizes=sizes,
                    scales=scales, flags=flags, tag=tag, note=note, dev=dev, maybe=maybe)
        for o in outs:
            np.asarray(o)[...] = 7
        return [np.asarray(a) * 2 for a in xs], list(sizes) + [len(tag)], tag + "!", dev

    ns, lib, op = _bridged_op(
        "lists(Tensor[] xs, Tensor?[] ys, int[] sizes, float[] scales, bool[] flags, str tag, "
        "str? note, Device dev, int[]? maybe, Tensor(a!)[] outs) -> (Tensor[], int[], str, Device)",
        lists)
    x = torch.ones(3)
    outs = [torch.zeros(2), torch.zeros(1)]
    versions = [o._version for o in outs]
    r = op([x, x + 1], [None, x], [1, 2, 3], [0.5, -2.0], [True, False], "héllo", None,
           torch.device("cpu"), None, outs)
    assert seen == dict(ys=[None, [1.0, 1.0, 1.0]], sizes=[1, 2, 3], scales=[0.5, -2.0],
                        flags=[True, False], tag="héllo", note=None, dev="cpu", maybe=None)
    torch.testing.assert_close(r[0], [x * 2, (x + 1) * 2])
    assert r[1:] == ([1, 2, 3, 5], "héllo!", torch.device("cpu"))
    assert [o.tolist() for o in outs] == [[7.0, 7.0], [7.0]]
    assert all(o._version > v for o, v in zip(outs, versions))
    r = op([x], [], [], [], [], "", "n", "cpu", [4], [])
    assert seen["note"] == "n" and seen["maybe"] == [4] and r[1:] == ([0], "!", torch.device("cpu"))
    # A bad item part-way through a list: the error names the op and the argument, and every
    # handle torch passed (items before and after it, later arguments) is freed.
    a, bad = torch.ones(2), torch.ones(2, dtype=torch.complex64)
    uses = (a._use_count(), bad._use_count())
    with pytest.raises((TypeError, ValueError, RuntimeError),
                       match=rf"\[{ns}::lists\] argument 'xs' \(#0\)"):
        op([a, bad, a], [bad, None, a], [1], [1.0], [True], "s", "t", "cpu", [1], [a, bad])
    assert (a._use_count(), bad._use_count()) == uses
    # A meta device crosses; a device type opreg lacks is refused, naming op and argument.
    assert op([a], [], [], [], [], "", None, "meta", None, [])[3] == torch.device("meta")
    with pytest.raises(TypeError, match=rf"\[{ns}::lists\] argument 'dev' \(#7\): expected "
                                        r"Device"):
        op([a], [], [], [], [], "", None, torch.device("xpu"), None, [])
    # The same bad item through opreg.ops (the Python kernels' path) is named the same way.
    with pytest.raises((TypeError, ValueError), match=rf"\[{ns}::lists\] argument 'xs' \(#0\)"):
        getattr(getattr(opreg.ops, ns), "lists")([a, bad], [], [], [], [], "", None, "cpu", None,
                                                  [])
    live = opreg_torch._kernels.live_results()
    del r
    if _bridge_expected():  # the C++ kernel's result tensors go back when torch frees them
        assert opreg_torch._kernels.live_results() == live - 1
    lib._destroy()


def test_an_op_writing_a_tensor_list_compiles_fullgraph():
    # vLLM's style: `-> ()`, a written Tensor[] and str / int[] arguments; torch's
    # functionalization handles the written list, and eager calls reach the C++ kernel.
    seen = []

    def scale_all(xs, s, tag, dims):
        seen.append((tag, dims))
        for x in xs:
            np.asarray(x)[...] *= s

    _, lib, op = _bridged_op("scale_all(Tensor(a!)[] xs, float s, str tag, int[] dims) -> ()",
                             scale_all)

    def f(a, b):
        op([a, b], 2.0, "kv", [1, 2])
        return a + b

    g = torch.compile(f, backend="aot_eager", fullgraph=True)
    a, b = torch.ones(3), torch.full((3,), 2.0)
    torch.testing.assert_close(g(a, b), torch.full((3,), 6.0))
    assert a.tolist() == [2.0] * 3 and b.tolist() == [4.0] * 3
    assert seen and all(s == ("kv", [1, 2]) for s in seen)
    lib._destroy()


def test_optional_returns_cross_the_cpp_bridge():
    # A `T?` return is None or a box torch frees (made with torch's own allocator).
    _, lib, op = _bridged_op(
        "maybe(Tensor x, bool give) -> (Tensor?, int?, int[]?, str?)",
        lambda x, give: (np.asarray(x) * 3, 4, [1, 2], "s") if give else (None, None, None, None))
    t, *rest = op(torch.ones(2), True)
    torch.testing.assert_close(t, torch.full((2,), 3.0))
    assert rest == [4, [1, 2], "s"]
    assert op(torch.ones(2), False) == (None, None, None, None)
    live = opreg_torch._kernels.live_results()
    del t
    if _bridge_expected():
        assert opreg_torch._kernels.live_results() == live - 1
    lib._destroy()


def test_layout_and_memory_format_cross_as_torch_codes():
    # Layout and MemoryFormat travel as torch's codes (the ones opreg's IValue holds), through
    # the C++ kernel; opreg.ops takes torch's objects and names too.
    ns, lib, op = _bridged_op(
        "codes(Tensor x, Layout layout, MemoryFormat? mf=None) -> (Layout, MemoryFormat)",
        lambda x, layout, mf: (layout, 0 if mf is None else mf))
    x = torch.ones(2)
    # torch.ops gives these back as codes, as it does for aten ops' Layout returns.
    assert op(x, torch.strided) == (0, 0)
    assert op(x, torch.sparse_csr, torch.channels_last) == (2, 2)
    oop = getattr(getattr(opreg.ops, ns), "codes")
    assert oop(x, torch.sparse_coo, torch.preserve_format) == (1, 1)
    assert oop(x, "strided", "channels_last_3d") == (0, 3)
    with pytest.raises(TypeError, match=rf"\[{ns}::codes\] argument 'mf' \(#2\): expected "
                                        r"MemoryFormat .*got torch.dtype"):
        oop(x, torch.strided, torch.float32)
    lib._destroy()


@needs_ops
def test_cpp_bridge_calls_from_several_threads():
    # torch releases the GIL around the op; the bridge takes it back once to give back a call's
    # tensor arguments. Threads racing for it must all finish, with right results and no
    # references left behind.
    import threading
    w = torch.rand(64) + 0.5
    lw, lb = torch.randn(16, 64), torch.randn(16)
    errors = []

    def work(seed):
        try:
            g = torch.Generator().manual_seed(seed)
            x = torch.randn(8, 64, generator=g)
            uses = x._use_count()
            for _ in range(2000):
                y = torch.ops.opreg.linear(x, lw, lb)  # three tensor arguments
                r = x.clone()
                torch.ops.opreg.fused_add_rms_norm_(r, x.clone(), w, 1e-6)
            torch.testing.assert_close(y, torch.nn.functional.linear(x, lw, lb), rtol=1e-4,
                                       atol=1e-4)
            s = x + x
            torch.testing.assert_close(r, s * torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + 1e-6)
                                       * w)
            assert x._use_count() == uses
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread did not finish"
    assert not errors, errors
    assert w._use_count() == 1 and lw._use_count() == 1


@needs_ops
def test_cpp_bridge_keeps_no_references(device):
    x = torch.randn(8, 32, device=device)
    w = torch.rand(32, device=device) + 0.5
    bad = torch.ones(2, 4, dtype=torch.int64, device=device)
    live = opreg_torch._kernels.live_results()
    uses = (x._use_count(), w._use_count(), bad._use_count())
    for _ in range(100_000):
        y = torch.ops.opreg.rms_norm(x, w, 1e-6)
    y2 = torch.ops.opreg.topk(x, 2, -1)
    assert opreg_torch._kernels.live_results() >= live + (1 if "opreg::rms_norm" not in
                                                            opreg_torch.python_kernels() else 0)
    for _ in range(200):
        with pytest.raises((TypeError, RuntimeError)):
            torch.ops.opreg.rms_norm(bad, w, 1e-6)
    del y, y2
    assert opreg_torch._kernels.live_results() == live
    assert (x._use_count(), w._use_count(), bad._use_count()) == uses


@needs_ops
def test_cpp_bridge_reuses_argument_objects_but_never_a_kept_one():
    if "opreg::rms_norm" in opreg_torch.python_kernels():
        pytest.skip("this torch has no C bridge for opreg::rms_norm: "
                    + opreg_torch.python_kernels()["opreg::rms_norm"])
    x = torch.randn(4, 16)
    w = torch.rand(16) + 0.5
    torch.ops.opreg.rms_norm(x, w, 1e-6)
    cached = opreg._C._recycled_tensors_cached()
    assert cached >= 2
    # out= returns a tensor over the out argument's memory: that argument's object is kept.
    out = torch.zeros(4, 16)
    r = torch.ops.opreg.rms_norm.out(x, w, 1e-6, out=out)
    assert r.data_ptr() == out.data_ptr()
    expect = out.clone()
    del out
    for _ in range(10):
        torch.ops.opreg.rms_norm(torch.randn(4, 16), w, 1e-6)
    torch.testing.assert_close(r, expect)
    torch.testing.assert_close(r, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)


@needs_ops
def test_meta_and_cpu_tensors_together_are_refused_through_torch_ops():
    # torch picks the Meta kernel when any argument is a meta tensor; opreg's rule (one device
    # type per call) holds there too, as torch's own ops refuse the mix.
    m, c = torch.empty(3, device="meta"), torch.ones(3)
    with pytest.raises(RuntimeError, match=r"\[opreg::add\] expected every tensor on one device: "
                                           r"argument 'self' is on meta, argument 'other' on cpu"):
        torch.ops.opreg.add(m, c)
    assert torch.ops.opreg.add(m, m).device.type == "meta"


def test_an_in_place_op_of_a_cpp_library_returns_the_callers_tensor_and_bumps_it():
    # _opreg_test::mul_ (the in-place row of bench_python_call.py): the C++ kernel where the
    # bridge is available, the caller's own tensor back, its version bumped, strided selves too.
    opreg._C._load_test_ops()
    opreg_torch.sync()
    op = torch.ops._opreg_test.mul_.default
    if _torch_has_stable_from_blob() and not opreg_torch._kernels.C_BRIDGE_UNAVAILABLE:
        assert "_opreg_test::mul_" not in opreg_torch.python_kernels()
    x = torch.arange(6, dtype=torch.float32)
    version = x._version
    assert op(x, torch.full((6,), 2.0)) is x
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert x._version > version
    grid = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    column = grid[:, 1:3]  # strides (4, 1): not contiguous
    assert op(column, torch.full((3, 2), -1.0)) is column
    assert grid.tolist() == [[0, -1, -2, 3], [4, -5, -6, 7], [8, -9, -10, 11]]
    with pytest.raises(ValueError, match=r"\[_opreg_test::mul_\] mul_: expected float32 tensors"):
        op(x, torch.ones(3))


def test_a_cpp_kernel_with_str_and_int_list_arguments_is_reached_through_torch_ops():
    # _opreg_test::noop_args (bench_python_call.py's vLLM-style row): a C++ kernel taking
    # std::string_view and a span of int64, reached with no Python kernel.
    opreg._C._load_test_ops()
    opreg_torch.sync()
    if _bridge_expected():
        assert "_opreg_test::noop_args" not in opreg_torch.python_kernels()
    x = torch.ones(2)
    assert torch.ops._opreg_test.noop_args(x, "auto", [16, 32]) is None
    assert opreg.ops._opreg_test.noop_args(x, "fp8", []) is None
    with pytest.raises((TypeError, RuntimeError), match=r"dims"):
        torch.ops._opreg_test.noop_args(x, "auto", ["a"])


_FRAMES_SCRIPT = r"""
import json, os, sys, torch, opreg, opreg.torch
package = os.path.dirname(opreg.__file__)
ops = torch.ops.opreg
seen = {}
for mode, context in [("grad", torch.enable_grad), ("no_grad", torch.no_grad),
                      ("inference_mode", torch.inference_mode)]:
    with context():
        x, r, w = torch.randn(4, 8), torch.randn(4, 8), torch.rand(8) + 0.5
        b, out = torch.randn(3, 8), torch.empty(4, 8)
        calls = {
            "add": lambda: ops.add(x, x, alpha=2),  # Scalar: not in the stable C ABI
            "add.out": lambda: ops.add.out(x, x, alpha=2, out=out),
            "mul": lambda: ops.mul(x, x),
            "rms_norm": lambda: ops.rms_norm(x, w, 1e-6),
            "fused_add_rms_norm_": lambda: ops.fused_add_rms_norm_(x, r, w, 1e-6),
            "silu_and_mul": lambda: ops.silu_and_mul(x),
            "softmax": lambda: ops.softmax(x, -1),
            "topk": lambda: ops.topk(x, 2, -1),
            "linear": lambda: ops.linear(x, b, None),
            "per_token_quant": lambda: ops.per_token_quant(x, torch.int8),
        }
        for name, call in calls.items():
            frames = []

            def profile(frame, event, arg):
                if event == "call" and frame.f_code.co_filename.startswith(package):
                    frames.append(frame.f_code.co_name)

            sys.setprofile(profile)
            try:
                result = call()
            finally:
                sys.setprofile(None)
            if name == "add.out":
                assert result is out
            seen[f"{name} {mode}"] = frames
json.dump({"frames": seen, "python_kernels": sorted(opreg.torch.python_kernels()),
           "bridge": opreg.torch._kernels.BRIDGE},
          open(sys.argv[1], "w"))
"""


@needs_ops
@pytest.mark.parametrize("kernels", ["default", "OPREG_TORCH_BRIDGE=stable",
                                     "OPREG_TORCH_PYTHON_KERNELS=1"])
def test_no_opreg_python_frame_on_builtin_calls(tmp_path, kernels):
    # Every built-in op, in its functional, in-place and out forms and in every autograd mode,
    # runs no Python function of the opreg package when called through torch.ops: through a C++
    # bridge, or where the stable C ABI cannot carry an argument (opreg::add's Scalar alpha),
    # or with Python kernels forced, through a C callable torch calls on its Python-kernel path.
    import json
    import os
    import subprocess
    import sys
    script, out = tmp_path / "frames.py", tmp_path / "frames.json"
    script.write_text(_FRAMES_SCRIPT)
    env = dict(os.environ)
    env.pop("OPREG_TORCH_PYTHON_KERNELS", None)
    env.pop("OPREG_TORCH_BRIDGE", None)
    if kernels != "default":
        env.update([kernels.split("=")])
    subprocess.run([sys.executable, str(script), str(out)], env=env, check=True, timeout=300)
    report = json.loads(out.read_text())
    if report["bridge"] == "native":
        # The native bridge carries the Scalar too: no op takes the Python-kernel path.
        assert report["python_kernels"] == []
    else:
        assert "opreg::add" in report["python_kernels"]  # the case this test is about
    assert len(report["frames"]) == 30
    assert {call: frames for call, frames in report["frames"].items() if frames} == {}


@needs_ops
def test_a_dtype_opreg_lacks_is_named_as_torch_names_it():
    if opreg_torch.python_kernels().get("opreg::rms_norm"):
        pytest.skip("rms_norm has no C++ kernel here")
    with pytest.raises(TypeError, match=r"\[opreg::rms_norm\] argument 'input' \(#0\): expected a "
                                        r"tensor of a dtype opreg has, got torch\.complex64"):
        torch.ops.opreg.rms_norm(torch.ones(2, 4, dtype=torch.complex64), torch.ones(4), 1e-6)


def test_results_are_typed_aliased_and_made_once_on_every_bridge():
    # Found by attacking both C++ bridges (2026-11-28): a result not of its declared type is
    # refused, naming the return; an out argument after 8 tensor inputs still comes back as the
    # caller's tensor; a fresh result returned twice is one torch tensor (as torch.library's);
    # a `Tensor?[]` return crosses; a meta result is refused rather than read as CPU memory.
    ns = f"cpp_bridge_ns{next(_ns)}"
    lib = opreg.Library(ns, "DEF")
    lib.define("wrong(Tensor x) -> (int, str)")
    lib.define("sum.out(Tensor[] xs, *, Tensor(a!) out) -> Tensor(a!)")
    lib.define("twice(Tensor x) -> (Tensor, Tensor)")
    lib.define("maybe(Tensor x) -> Tensor?[]")
    lib.define("meta(Tensor x) -> Tensor")
    lib.impl("wrong", lambda x: (2.5, 3), "CPU")

    def sum_out(xs, out):
        np.asarray(out)[...] = sum(np.asarray(t) for t in xs)
        return out

    lib.impl("sum.out", sum_out, "CPU")

    def twice(x):
        r = opreg.from_dlpack(np.asarray(x) * 2)
        return r, r

    lib.impl("twice", twice, "CPU")
    lib.impl("maybe", lambda x: [None, x], "CPU")
    lib.impl("meta", lambda x: opreg.empty([2], device="meta"), "CPU")
    ops = getattr(torch.ops, ns)
    x = torch.ones(3)
    with pytest.raises(TypeError, match=rf"\[{ns}::wrong\] return #0"):
        ops.wrong(x)
    xs, out = [torch.ones(3) for _ in range(9)], torch.zeros(3)
    r = ops.sum.out(xs, out=out)
    assert r is out and out.tolist() == [9.0] * 3
    a, b = ops.twice(x)
    assert a is b
    none, same = ops.maybe(x)
    assert none is None and same is x
    live = opreg_torch._kernels.live_results()
    with pytest.raises(RuntimeError, match=rf"\[{ns}::meta\] return #0 is a tensor on meta"):
        ops.meta(x)
    assert opreg_torch._kernels.live_results() == live
    lib._destroy()


@needs_ops
def test_a_scalar_type_opreg_lacks_is_named():
    # torch.ops passes a dtype as its ScalarType code (or, on the Python-kernel path, as the
    # object); opreg.ops as the object given. Either way the error names the dtype, not only the
    # kind of value that carried it.
    x = torch.randn(2, 8)
    with pytest.raises(TypeError, match=r"\[opreg::per_token_quant\] argument 'dtype' \(#1\): "
                                        r"expected a ScalarType that opreg supports.*, got "
                                        r"torch\.complex64 \((ScalarType 9|torch\.dtype)\)"):
        torch.ops.opreg.per_token_quant(x, torch.complex64)
    with pytest.raises(TypeError, match=r"\[opreg::per_token_quant\] argument 'dtype' \(#1\): "
                                        r"expected a ScalarType that opreg supports .*, got "
                                        r"torch\.complex64 \(torch\.dtype\)"):
        opreg.ops.opreg.per_token_quant(x, torch.complex64)
    with pytest.raises(TypeError, match=r"got 'complex64' \(str\)"):
        opreg.ops.opreg.per_token_quant(x, "complex64")
