"""Every built-in op that writes an argument bumps its version counter through torch.ops, as
torch's own in-place and out ops do, so autograd refuses a backward that would read a tensor the
op overwrote (a C++-defined op has no Python kernel doing it: the C++ bridge bumps)."""
import pytest

torch = pytest.importorskip("torch")

import opreg  # noqa: E402
import opreg.torch as opreg_torch  # noqa: E402
from torch_test_util import needs_ops  # noqa: E402


def _r(*shape):
    return torch.randn(*shape)


# The functional op of each built-in `.out` op, with arguments; the out op writes outs shaped
# like its results.
_FUNCTIONAL_ARGS = {
    "add": lambda: (_r(4, 8), _r(4, 8)),
    "mul": lambda: (_r(4, 8), _r(4, 8)),
    "split_add": lambda: (_r(4, 8), _r(4, 8)),
    "rms_norm": lambda: (_r(4, 8), _r(8), 1e-6),
    "silu_and_mul": lambda: (_r(4, 16),),
    "per_token_quant": lambda: (_r(4, 8), torch.int8),
    "topk": lambda: (_r(4, 8), 2),
    "softmax": lambda: (_r(4, 8),),
    "linear": lambda: (_r(4, 8), _r(6, 8)),
}

_MODES = {"grad": torch.enable_grad, "no_grad": torch.no_grad,
          "inference_mode": torch.inference_mode}


def _written_names(torch_op):
    return [a.name for a in torch_op._schema.arguments
            if a.alias_info is not None and a.alias_info.is_write]


def _out_call(name):
    """(torch out op, positional args, outs by name): outs shaped like the results."""
    args = _FUNCTIONAL_ARGS[name]()
    results = getattr(torch.ops.opreg, name).default(*args)
    results = results if isinstance(results, tuple) else (results,)
    op = getattr(torch.ops.opreg, name).out
    outs = {n: torch.empty_like(r) for n, r in zip(_written_names(op), results)}
    return op, args, outs


@needs_ops
def test_every_builtin_writing_op_is_covered():
    writing = set()
    for qualified in opreg.list_ops():
        ns, rest = qualified.split("::", 1)
        if ns != "opreg":
            continue
        op = opreg_torch.to_torch_op(qualified)
        if _written_names(op):
            writing.add(rest)
    assert writing == {f"{n}.out" for n in _FUNCTIONAL_ARGS} | {"fused_add_rms_norm_"}


@needs_ops
@pytest.mark.parametrize("mode", sorted(_MODES))
@pytest.mark.parametrize("name", sorted(_FUNCTIONAL_ARGS))
def test_out_op_bumps_each_out(name, mode):
    op, args, outs = _out_call(name)
    before = {n: t._version for n, t in outs.items()}
    with _MODES[mode]():
        op(*args, **outs)
    assert {n: t._version for n, t in outs.items()} == {n: v + 1 for n, v in before.items()}


@needs_ops
@pytest.mark.parametrize("name", sorted(_FUNCTIONAL_ARGS))
def test_backward_through_an_overwritten_out_raises(name):
    op, args, outs = _out_call(name)
    # A float out that autograd saved (y.sin() saves y), then overwritten by the op.
    target = next(n for n, t in outs.items() if t.is_floating_point())
    leaf = torch.randn(outs[target].shape, requires_grad=True)
    saved = leaf * 1
    loss = saved.sin().sum()
    with torch.no_grad():
        op(*args, **{**outs, target: saved})
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@needs_ops
@pytest.mark.parametrize("mode", sorted(_MODES))
def test_in_place_op_bumps_both_written_arguments(mode):
    x, residual, weight = _r(4, 8), _r(4, 8), torch.ones(8)
    before = (x._version, residual._version, weight._version)
    with _MODES[mode]():
        torch.ops.opreg.fused_add_rms_norm_(x, residual, weight, 1e-6)
    assert (x._version, residual._version, weight._version) == (
        before[0] + 1, before[1] + 1, before[2])


@needs_ops
def test_backward_through_an_overwritten_in_place_argument_raises():
    leaf = torch.randn(4, 8, requires_grad=True)
    saved = leaf * 1
    loss = saved.sin().sum()
    with torch.no_grad():
        torch.ops.opreg.fused_add_rms_norm_(saved, _r(4, 8), torch.ones(8), 1e-6)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@needs_ops
def test_inference_tensor_outside_inference_mode_is_refused_unwritten():
    # torch refuses an in-place update of an inference tensor outside inference_mode; the op
    # names itself and the argument, and writes nothing.
    with torch.inference_mode():
        x = torch.zeros(4, 8)
    with pytest.raises(RuntimeError, match=r"\[opreg::fused_add_rms_norm_\] argument 'input' "
                                           r"\(#0\).*Inplace update to inference tensor"):
        torch.ops.opreg.fused_add_rms_norm_(x, torch.ones(4, 8), torch.ones(8), 1e-6)
    assert torch.count_nonzero(x) == 0


@needs_ops
def test_c_kernels_bump_without_a_python_kernel():
    # The bump is the C++ bridge's (torch's bump_version), not a Python ADInplaceOrView kernel.
    if not opreg_torch._kernels.C_BRIDGE_BUMPS:
        pytest.skip("this torch's libtorch_cpu has no bump_version symbol: a Python kernel bumps")
    qualified = "opreg::fused_add_rms_norm_"
    assert torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "CPU")
    assert qualified not in opreg_torch.python_kernels()
    assert not torch._C._dispatch_has_kernel_for_dispatch_key(qualified, "ADInplaceOrView")
