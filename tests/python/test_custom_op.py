from typing import List, Optional, Sequence, Tuple

import numpy as np
import pytest

import opreg
from opreg import Tensor


def schema_of(fn, mutates_args=()):
    return opreg.infer_schema(fn, mutates_args=mutates_args)


def test_infer_basic_types():
    def f(x: Tensor, n: int, eps: float, flag: bool, mode: str) -> Tensor: ...

    assert schema_of(f) == "(Tensor x, SymInt n, float eps, bool flag, str mode) -> Tensor"


def test_infer_optional_and_lists():
    def f(a: Optional[Tensor], b: List[Tensor], c: Sequence[int], d: list[float],
          e: List[Optional[Tensor]], g: Optional[List[int]], h: Optional[float]) -> List[Tensor]: ...

    assert schema_of(f) == ("(Tensor? a, Tensor[] b, SymInt[] c, float[] d, Tensor?[] e, "
                            "SymInt[]? g, float? h) -> Tensor[]")


def test_infer_defaults_and_kwarg_only():
    def f(x: Tensor, eps: float = 1e-05, k: int = 2, flag: bool = True, s: str = "hi",
          o: Optional[int] = None, *, scale: float = 1.0) -> Tensor: ...

    assert schema_of(f) == ('(Tensor x, float eps=1e-05, SymInt k=2, bool flag=True, str s="hi", '
                            "SymInt? o=None, *, float scale=1.0) -> Tensor")


def test_infer_returns():
    def none_ret(x: Tensor) -> None: ...

    def tuple_ret(x: Tensor) -> Tuple[Tensor, Tensor, int]: ...

    def scalar_ret(x: Tensor) -> float: ...

    assert schema_of(none_ret) == "(Tensor x) -> ()"
    assert schema_of(tuple_ret) == "(Tensor x) -> (Tensor, Tensor, SymInt)"
    assert schema_of(scalar_ret) == "(Tensor x) -> float"


def test_infer_mutates_args():
    def f(x: Tensor, y: Optional[Tensor], zs: List[Tensor], n: int) -> None: ...

    assert schema_of(f, ["x"]) == "(Tensor(a0!) x, Tensor? y, Tensor[] zs, SymInt n) -> ()"
    assert schema_of(f, ["y", "zs"]) == "(Tensor x, Tensor(a1!)? y, Tensor(a2!)[] zs, SymInt n) -> ()"
    assert schema_of(f, "unknown") == ("(Tensor(a0!) x, Tensor(a1!)? y, Tensor(a2!)[] zs, "
                                       "SymInt n) -> ()")


def test_infer_string_annotations():
    def f(x: "Tensor", n: "int") -> "Tensor": ...

    assert schema_of(f) == "(Tensor x, SymInt n) -> Tensor"


def test_infer_refusals_with_torch_wording():
    def tup(x: Tuple[int, int]) -> Tensor: ...

    with pytest.raises(ValueError, match="We do not support Tuple inputs in schema. As a workaround, "
                                         "please try to use List instead"):
        schema_of(tup)

    def f(x: Tensor) -> Tensor: ...

    with pytest.raises(ValueError, match=r"\{'y'\} in mutates_args were not found in the custom op's signature"):
        schema_of(f, ["y"])

    def g(x: Tensor, n: int) -> None: ...

    with pytest.raises(ValueError, match="Parameter n is in mutable_args but only Tensors or collections "
                                         "of Tensors can be mutated"):
        schema_of(g, ["n"])

    def h(x) -> Tensor: ...

    with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
        schema_of(h)

    def v(*xs: Tensor) -> Tensor: ...

    with pytest.raises(ValueError, match="positional-only args, varargs, or varkwargs"):
        schema_of(v)

    def r(x: Tensor): ...

    with pytest.raises(ValueError, match="No return type annotation"):
        schema_of(r)

    with pytest.raises(ValueError, match="mutates_args must either be a sequence"):
        schema_of(f, "all")


def test_custom_op_end_to_end(ns):
    @opreg.custom_op(f"{ns}::scale", mutates_args=())
    def scale(x: Tensor, alpha: float = 2.0) -> Tensor:
        return x.numpy() * alpha

    assert scale.schema == f"{ns}::scale(Tensor x, float alpha=2.) -> Tensor"
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(scale(x)), x * 2)
    np.testing.assert_array_equal(np.asarray(getattr(opreg.ops, ns).scale(x, alpha=3)), x * 3)

    @scale.register_fake
    def _(x, alpha=2.0):
        return opreg.empty_like(x)

    m = scale(opreg.empty((5,), device="meta"))
    assert m.device == "meta" and m.shape == (5,)

    @scale.register_kernel("cpu")
    def _(x, alpha=2.0):
        return x.numpy() * alpha + 100

    np.testing.assert_array_equal(np.asarray(scale(x)), x * 2 + 100)


def test_custom_op_mutation(ns):
    @opreg.custom_op(f"{ns}::fill_", mutates_args=["out"])
    def fill_(out: Tensor, value: float) -> None:
        out.numpy()[...] = value

    assert fill_.schema == f"{ns}::fill_(Tensor(a0!) out, float value) -> ()"
    a = np.zeros(3, np.float32)
    assert fill_(a, 4.0) is None
    np.testing.assert_array_equal(a, [4, 4, 4])
    # A trivial fake implementation exists for mutating ops without returns.
    assert fill_(opreg.empty((3,), device="meta"), 1.0) is None


def test_custom_op_may_not_return_an_input(ns):
    @opreg.custom_op(f"{ns}::ident", mutates_args=())
    def ident(x: Tensor) -> Tensor:
        return x

    with pytest.raises(RuntimeError, match=r"must not also be an input to this custom operator"):
        ident(np.ones(2, np.float32))

    @opreg.custom_op(f"{ns}::view", mutates_args=())
    def view(x: Tensor) -> Tensor:
        return x.numpy()[1:]

    with pytest.raises(RuntimeError, match="may not alias any inputs"):
        view(np.ones(4, np.float32))


def test_custom_op_explicit_schema(ns):
    @opreg.custom_op(f"{ns}::add1", mutates_args=(), schema="(Tensor x) -> Tensor")
    def add1(x):
        return x.numpy() + 1

    np.testing.assert_array_equal(np.asarray(add1(np.zeros(2, np.float32))), [1, 1])
    with pytest.raises(ValueError, match="The schema suggests that the op mutates"):
        opreg.custom_op(f"{ns}::m", mutates_args=(), schema="(Tensor(a!) x) -> ()")(lambda x: None)


def test_custom_op_refuses_kwarg_only_tensors(ns):
    with pytest.raises(ValueError, match="custom_op with kwarg-only Tensor args"):
        @opreg.custom_op(f"{ns}::kw", mutates_args=())
        def kw(x: Tensor, *, y: Tensor) -> Tensor:
            return x


def test_custom_op_name_needs_namespace():
    with pytest.raises(ValueError, match="namespace::name"):
        opreg.custom_op("nonamespace", mutates_args=())(lambda x: x)


def test_custom_op_outlives_its_object_and_is_replaced_by_a_new_definition(ns):
    # As with torch.library.custom_op: the op lives for the process, not as long as the
    # CustomOpDef object; defining the name again replaces it.
    import gc

    def define(factor):
        @opreg.custom_op(f"{ns}::f", mutates_args=())
        def f(x: Tensor) -> Tensor:
            return x.numpy() * factor
        return None  # the CustomOpDef object is dropped here

    define(2.0)
    gc.collect()
    x = np.ones(3, dtype=np.float32)
    assert f"{ns}::f" in opreg.list_ops()
    np.testing.assert_array_equal(np.asarray(getattr(opreg.ops, ns).f(x)), x * 2)
    define(3.0)  # no "registered multiple times" error: the old op is gone
    gc.collect()
    np.testing.assert_array_equal(np.asarray(getattr(opreg.ops, ns).f(x)), x * 3)


def test_custom_op_without_formula_raises_on_backward_as_torch_does(ns):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import opreg.torch  # noqa: F401 - opreg's ops in torch.ops

    @opreg.custom_op(f"{ns}::g", mutates_args=())
    def g(x: Tensor) -> Tensor:
        return x.numpy() * 2

    x = torch.ones(3, requires_grad=True)
    y = g(x)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match=rf"Trying to backward through {ns}\.g\.default but no "
                                           r"autograd formula was registered"):
        y.sum().backward()
    with torch.no_grad():  # no grad needed: the op runs as before
        torch.testing.assert_close(g(x), torch.full((3,), 2.0))
    # A formula given afterwards replaces the refusal, through torch.library as through opreg.
    torch.library.register_autograd(f"{ns}::g", lambda ctx, grad: grad * 2)
    g(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0))
    g.register_autograd(lambda ctx, grad: grad * 5)
    x.grad = None
    g(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 5.0))

    # Defined again under the same schema: a new op, with no formula until it is given one.
    @opreg.custom_op(f"{ns}::g", mutates_args=())
    def g2(x: Tensor) -> Tensor:
        return x.numpy() * 3

    y = g2(x)
    torch.testing.assert_close(y, torch.full((3,), 3.0), check_stride=False)
    with pytest.raises(RuntimeError, match="no autograd formula was registered"):
        y.sum().backward()


def test_custom_op_annotated_with_torch_types_gets_torch_values(ns):
    # A torch.library.custom_op body, unchanged: torch tensors (over the op's memory, so
    # in-place writes reach the caller), a torch.dtype and a torch.device, whether the op is
    # called with torch tensors, through torch.ops or through opreg.ops with NumPy arrays.
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import opreg.torch  # noqa: F401 - opreg's ops in torch.ops
    seen = []

    @opreg.custom_op(f"{ns}::cast", mutates_args=())
    def cast(x: torch.Tensor, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        seen.append((type(x), dtype, device))
        return (x * 2).to(dtype)

    @opreg.custom_op(f"{ns}::bump_", mutates_args=["x"])
    def bump_(x: torch.Tensor) -> None:
        x.add_(1)

    y = cast(torch.ones(3), torch.float16, torch.device("cpu"))
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float16
    torch.testing.assert_close(y, torch.full((3,), 2.0, dtype=torch.float16))
    torch.ops.__getattr__(ns).cast(torch.ones(2), torch.bfloat16, torch.device("cpu"))
    z = getattr(opreg.ops, ns).cast(np.ones(2, dtype=np.float32), torch.float16, "cpu")
    np.testing.assert_array_equal(np.asarray(z), np.full(2, 2.0, dtype=np.float16))
    assert seen == [(torch.Tensor, torch.float16, torch.device("cpu")),
                    (torch.Tensor, torch.bfloat16, torch.device("cpu")),
                    (torch.Tensor, torch.float16, torch.device("cpu"))]
    t, a = torch.zeros(3), np.zeros(3, dtype=np.float32)
    bump_(t)
    getattr(opreg.ops, ns).bump_(a)
    torch.testing.assert_close(t, torch.ones(3))
    np.testing.assert_array_equal(a, np.ones(3, dtype=np.float32))


def test_torch_style_custom_op_kernels_meta_and_device_defaults(ns):
    # Kernels registered later on a torch-style op get torch values too, annotated or not; a
    # meta kernel gets torch meta tensors; a Device default (printed bare, `Device d=cpu`,
    # which torch's parser refuses) still makes a torch op; opreg's module-level APIs take the
    # CustomOpDef itself, as torch's take theirs.
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import opreg.torch  # noqa: F401 - opreg's ops in torch.ops

    @opreg.custom_op(f"{ns}::f", mutates_args=(), device_types="cpu")
    def f(x: torch.Tensor, device: torch.device = torch.device("cpu")) -> torch.Tensor:
        return x * 2

    @f.register_kernel("cpu")
    def _(x, device=None):
        return x * 3  # an opreg.Tensor has no `*` with an int: this needs a torch tensor

    @f.register_kernel("meta")
    def _(x, device=None):
        return torch.empty_like(x)

    assert hasattr(getattr(torch.ops, ns), "f"), opreg.torch.skipped()
    torch.testing.assert_close(f(torch.ones(2)), torch.full((2,), 3.0))
    assert getattr(torch.ops, ns).f(torch.ones(2, device="meta")).shape == (2,)
    assert opreg.torch.to_torch_op(f) is getattr(torch.ops, ns).f.default
    opreg.register_autograd(f, lambda ctx, grad: grad * 3)
    x = torch.ones(2, requires_grad=True)
    f(x).sum().backward()
    torch.testing.assert_close(x.grad, torch.full((2,), 3.0))


def test_device_default_quoting_leaves_strings_and_optionals_alone(ns):
    # Only a bare `Device d=cpu` default is quoted for torch: a string default that reads like
    # one is left as it is (the op still becomes a torch op), and a `Device?` default other
    # than None, which torch would store as a string, keeps the op out of torch (opreg.ops
    # still runs it). A kernel annotated with opreg.Tensor on a torch-style op gets opreg
    # tensors.
    torch = pytest.importorskip("torch", reason="torch is not installed")
    import opreg.torch  # noqa: F401 - opreg's ops in torch.ops

    lib = opreg.Library(ns, "DEF")
    lib.define('s(Tensor x, str s="a, Device y=cpu") -> Tensor')
    lib.impl("s", lambda x, s: opreg.ops.opreg.mul(x, x), "CPU")
    lib.define("o(Tensor x, Device? d=cpu) -> Tensor")
    lib.impl("o", lambda x, d: opreg.ops.opreg.mul(x, x), "CPU")
    assert hasattr(getattr(torch.ops, ns), "s"), opreg.torch.skipped()
    assert getattr(torch.ops, ns).s.default._schema.arguments[1].default_value == "a, Device y=cpu"
    assert f"{ns}::o" in opreg.torch.skipped()
    x = np.full(2, 3.0, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(getattr(opreg.ops, ns).o(x)), [9, 9])

    @opreg.custom_op(f"{ns}::t", mutates_args=())
    def t(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    kinds = []

    @t.register_kernel("cpu")
    def _(x: opreg.Tensor):
        kinds.append(type(x))
        return opreg.ops.opreg.mul(x, x)

    torch.testing.assert_close(t(torch.full((2,), 3.0)), torch.full((2,), 9.0))
    assert kinds == [opreg.Tensor]
