"""torch.library parity of opreg.library: schema objects, Tag objects, register_fake on out
overloads (torch itself is not needed here)."""
import itertools

import numpy as np
import pytest

import opreg

_ns = itertools.count()


def _ns_name():
    return f"parity_ns{next(_ns)}"


def test_schema_is_a_str_with_torchs_attributes():
    ns = _ns_name()
    lib = opreg.Library(ns, "DEF")
    lib.define("f.out(Tensor x, int[2] k=[1, 2], *, float? eps=None, Tensor(a!) out) -> Tensor(a!)")
    s = getattr(opreg.ops, ns).f.out.schema
    assert isinstance(s, str) and isinstance(s, opreg.FunctionSchema)
    assert s == f"{ns}::f.out(Tensor x, int[2] k=[1, 2], *, float? eps=None, Tensor(a!) out) -> Tensor(a!)"
    assert s.name == f"{ns}::f" and s.overload_name == "out"
    x, k, eps, out = s.arguments
    assert (x.name, x.type, x.kwarg_only, x.alias_info) == ("x", "Tensor", False, None)
    assert (k.type, k.N, k.default_value, k.has_default_value) == ("int[]", 2, [1, 2], True)
    assert eps.kwarg_only and eps.type == "float?" and eps.default_value is None
    assert eps.has_default_value
    assert out.is_out and out.alias_info.before_set == {"a"} and out.alias_info.is_write
    (ret,) = s.returns
    assert ret.alias_info.is_write and str(ret) == "Tensor(a!)"
    assert s.is_mutable and not s.is_vararg
    lib._destroy()


def test_custom_op_schema_and_tags():
    ns = _ns_name()

    @opreg.custom_op(f"{ns}::twice", mutates_args=(), tags=(opreg.Tag.pt2_compliant_tag,))
    def twice(x: opreg.Tensor) -> opreg.Tensor:
        return np.asarray(x) * 2

    assert twice.schema.arguments[0].name == "x"
    assert getattr(opreg.ops, ns).twice.default.tags == ["pt2_compliant_tag"]


def test_tags_as_opreg_tags_torch_tags_or_names():
    assert opreg.Tag.core == "core" and "needs_fixed_stride_order" in {t.value for t in opreg.Tag}
    ns = _ns_name()
    lib = opreg.Library(ns, "DEF")
    tags, expect = [opreg.Tag.pt2_compliant_tag, "core"], ["pt2_compliant_tag", "core"]
    try:
        import torch

        tags.append(torch.Tag.needs_fixed_stride_order)
        expect.append("needs_fixed_stride_order")
    except ImportError:
        pass
    lib.define("f(Tensor x) -> Tensor", tags=tags)
    assert getattr(opreg.ops, ns).f.default.tags == expect
    lib.define("g(Tensor x) -> Tensor", tags=opreg.Tag.core)
    assert getattr(opreg.ops, ns).g.default.tags == ["core"]
    with pytest.raises(Exception, match="unknown tag 'shiny'"):
        lib.define("h(Tensor x) -> Tensor", tags=("shiny",))
    lib._destroy()


def test_register_fake_on_an_out_overload():
    ns = _ns_name()
    lib = opreg.Library(ns, "DEF")
    lib.define("f.out(Tensor x, *, Tensor(a!) out) -> Tensor(a!)")
    lib.register_fake("f.out", lambda x, *, out: out)
    with opreg.graph() as g:  # capture runs the Meta kernel: the fake implementation
        x = opreg.empty([3])
        out = opreg.empty([3])
        getattr(opreg.ops, ns).f.out(x, out=out)
    assert g.num_nodes == 1
    assert "Meta" in opreg.dump_op(f"{ns}::f.out")
    lib._destroy()


def test_module_level_functions_of_torch_library():
    # opreg.library.define / impl / register_fake / register_kernel, with torch.library's
    # names, argument order and decorator forms.
    ns = _ns_name()
    opreg.library.define(f"{ns}::twice", "(Tensor x) -> Tensor", tags=("pt2_compliant_tag",))
    opreg.library.define(f"{ns}::twice.scaled", "(Tensor x, float a) -> Tensor")

    @opreg.library.impl(f"{ns}::twice", "cpu")
    def _(x):
        return np.asarray(x) * 2

    opreg.library.register_kernel(f"{ns}::twice.scaled", ["cpu"],
                                  lambda x, a: np.asarray(x) * 2 * a)

    @opreg.library.register_fake(f"{ns}::twice")
    def _(x):
        return opreg.empty_like(x)

    x = np.arange(3, dtype=np.float32)
    packet = getattr(opreg.ops, ns).twice
    np.testing.assert_array_equal(packet(x), 2 * x)
    np.testing.assert_array_equal(packet.scaled(x, 3.0), 6 * x)
    assert packet(opreg.empty((4,), device="meta")).shape == (4,)
    assert "pt2_compliant_tag" in packet.default.tags
    # An op object works where a name does; "default" is the composite kernel of every backend.
    opreg.library.define(f"{ns}::tenfold", "(Tensor x) -> Tensor")
    opreg.library.impl(getattr(opreg.ops, ns).tenfold.default, "default",
                       lambda x: np.asarray(x) * 10)
    np.testing.assert_array_equal(getattr(opreg.ops, ns).tenfold(x), 10 * x)
    # register_kernel's device_types None is torch's "every device type" too.
    opreg.library.define(f"{ns}::halve", "(Tensor x) -> Tensor")
    opreg.library.register_kernel(f"{ns}::halve", None, lambda x: np.asarray(x) / 2)
    np.testing.assert_array_equal(getattr(opreg.ops, ns).halve(x), x / 2)
    assert "CompositeExplicit: registered at" in opreg.dump_op(f"{ns}::halve")
    assert opreg.library.custom_op is opreg.custom_op and opreg.library.Tag is opreg.Tag
    assert opreg.library.infer_schema is opreg.infer_schema
    with pytest.raises(ValueError, match="expected a qualified op name 'namespace::name', "
                                         "got 'twice'"):
        opreg.library.define("twice", "(Tensor x) -> Tensor")


def test_module_level_functions_take_a_library():
    # lib= registers into that Library, so its destruction undoes them.
    ns = _ns_name()
    lib = opreg.Library(ns, "FRAGMENT")
    opreg.library.define(f"{ns}::neg", "(Tensor x) -> Tensor", lib=lib)
    opreg.library.impl(f"{ns}::neg", "cpu", lambda x: -np.asarray(x), lib=lib)
    assert f"{ns}::neg" in opreg.list_ops()
    lib._destroy()
    assert f"{ns}::neg" not in opreg.list_ops()


def test_op_objects_copy_to_themselves():
    # As torch's OpOverload: an object holding ops (a module's attributes) can be deep-copied.
    import copy

    packet = opreg.ops.opreg.rms_norm
    holder = {"ops": [packet, packet.default]}
    copied = copy.deepcopy(holder)
    assert copied["ops"][0] is packet and copied["ops"][1] is packet.default
    assert copy.copy(packet.default) is packet.default
