import gc

import numpy as np
import pytest

import opreg


def test_define_impl_and_dump(ns):
    lib = opreg.Library(ns, "DEF")
    assert lib.define("f(Tensor x) -> Tensor") == "f"
    lib.impl("f", lambda x: x.numpy() + 1, "CPU")
    dump = opreg.dump_op(f"{ns}::f")
    assert f"{ns}::f(Tensor x) -> Tensor" in dump
    assert "test_library.py" in dump  # the Python caller's file:line
    assert f"{ns}::f" in opreg.list_ops()


def test_registrations_live_as_long_as_the_library(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x.numpy() * 3, "CPU")
    assert f"{ns}::f" in opreg.list_ops()
    del lib
    gc.collect()
    assert f"{ns}::f" not in opreg.list_ops()
    # The name can be defined again, with another schema.
    lib2 = opreg.Library(ns, "FRAGMENT")
    lib2.define("f(Tensor x, int k) -> Tensor")
    lib2.impl("f", lambda x, k: x.numpy() * k, "CPU")
    np.testing.assert_array_equal(np.asarray(opreg.ops.__getattr__(ns).f(np.ones(2, np.float32), 5)), [5, 5])


def test_destroy(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")
    lib.impl("f", lambda x: x.numpy(), "CPU")
    f = getattr(opreg.ops, ns).f
    lib._destroy()
    assert f"{ns}::f" not in opreg.list_ops()
    with pytest.raises(Exception, match="no longer defined"):
        f(np.ones(1))
    with pytest.raises(RuntimeError, match="destroyed"):
        lib.define("g(Tensor x) -> Tensor")
    lib._destroy()  # idempotent


def test_kernel_callable_released_with_library(ns):
    import sys

    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("f(Tensor x) -> Tensor")

    def kernel(x):
        return x.numpy()

    base = sys.getrefcount(kernel)
    lib.impl("f", kernel, "CPU")
    assert sys.getrefcount(kernel) == base + 1
    lib._destroy()
    assert sys.getrefcount(kernel) == base


def test_impl_library_with_key_and_override(ns):
    d = opreg.Library(ns, "FRAGMENT")
    d.define("f(Tensor x) -> Tensor")
    cpu = opreg.Library(ns, "IMPL", "CPU")
    cpu.impl("f", lambda x: x.numpy() + 1)
    f = getattr(opreg.ops, ns).f
    np.testing.assert_array_equal(np.asarray(f(np.zeros(1, np.float32))), [1])
    override = opreg.Library(ns, "IMPL", "CPU")
    override.impl("f", lambda x: x.numpy() + 2)
    np.testing.assert_array_equal(np.asarray(f(np.zeros(1, np.float32))), [2])
    override._destroy()  # the previous kernel is restored
    np.testing.assert_array_equal(np.asarray(f(np.zeros(1, np.float32))), [1])


def test_register_fake_is_the_meta_kernel(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("cat2(Tensor x) -> Tensor")
    lib.impl("cat2", lambda x: np.concatenate([x.numpy(), x.numpy()]), "CPU")
    lib.register_fake("cat2", lambda x: x.new_empty((2 * x.shape[0],)))
    m = getattr(opreg.ops, ns).cat2(opreg.empty((3,), device="meta"))
    assert m.device == "meta" and m.shape == (6,)


def test_composite_python_kernel_serves_every_key(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("ident_shape(Tensor x) -> Tensor")
    lib.impl("ident_shape", lambda x: opreg.empty_like(x))  # no key: every backend
    assert getattr(opreg.ops, ns).ident_shape(opreg.empty((2,), device="meta")).device == "meta"
    assert getattr(opreg.ops, ns).ident_shape(opreg.ones(2)).device == "cpu"


def test_link_out_variant_resolves_functional_calls(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("silu(Tensor x) -> Tensor")
    lib.define("silu_out(Tensor! result, Tensor x) -> ()")

    def silu_out(result, x):
        a = x.numpy()
        result.numpy()[...] = a / (1 + np.exp(-a))

    lib.impl("silu_out", silu_out, "CPU")
    lib.register_fake("silu", lambda x: opreg.empty_like(x))
    lib.link_out_variant("silu", "silu_out", ["result"])
    x = np.array([0.0, 1.0], np.float32)
    y = getattr(opreg.ops, ns).silu(x)
    np.testing.assert_allclose(np.asarray(y), x / (1 + np.exp(-x)), rtol=1e-6)
    assert "silu_out" in opreg.dump_op(f"{ns}::silu")


def test_register_symm_mem_args(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("all_reduce(Tensor input, str group_name) -> Tensor")
    lib.register_symm_mem_args("all_reduce", ["input"])
    assert "input" in opreg.dump_op(f"{ns}::all_reduce")
    with pytest.raises(ValueError):
        lib.register_symm_mem_args("all_reduce", [])
    with pytest.raises(ValueError):
        lib.register_symm_mem_args("all_reduce", ["nope"])


def test_fallback_receives_the_op(ns):
    d = opreg.Library(ns, "FRAGMENT")
    d.define("nok(Tensor x, int k) -> Tensor")
    seen = []

    def fallback(op, *args, **kwargs):
        seen.append(op.name)
        return opreg.empty((args[1],), device="meta")

    fb = opreg.Library("_", "IMPL", "Meta")
    fb.fallback(fallback)
    try:
        out = getattr(opreg.ops, ns).nok(opreg.empty((1,), device="meta"), 4)
        assert out.shape == (4,)
        assert seen == [f"{ns}::nok"]
    finally:
        fb._destroy()


def test_mutating_python_kernel(ns):
    lib = opreg.Library(ns, "FRAGMENT")
    lib.define("inc_(Tensor(a!) x) -> ()")

    def inc_(x):
        x.numpy()[...] += 1

    lib.impl("inc_", inc_, "CPU")
    a = np.zeros(3, np.float32)
    getattr(opreg.ops, ns).inc_(a)
    np.testing.assert_array_equal(a, [1, 1, 1])
