"""Fake (meta) and autograd formulas of compat_kernels' functional ops, from Python."""
import torch
from torch import Tensor

__all__ = ["muladd"]


def muladd(a: Tensor, b: Tensor, c: float) -> Tensor:
    """a * b + c, elementwise (float32, same shapes)."""
    return torch.ops.compat_kernels.muladd.default(a, b, c)


@torch.library.register_fake("compat_kernels::muladd")
def _(a: Tensor, b: Tensor, c: float) -> Tensor:
    torch._check(a.shape == b.shape)
    torch._check(a.dtype == torch.float)
    torch._check(b.dtype == torch.float)
    torch._check(a.device == b.device)
    return a.new_empty(a.shape)  # contiguous, as the kernel's result (not a's strides)


def _setup_context(ctx, inputs, output) -> None:  # noqa: ANN001
    a, b, _ = inputs
    saved_a, saved_b = None, None
    if ctx.needs_input_grad[0]:
        saved_b = b
    if ctx.needs_input_grad[1]:
        saved_a = a
    ctx.save_for_backward(saved_a, saved_b)


def _backward(ctx, grad: Tensor):  # noqa: ANN001, ANN202
    a, b = ctx.saved_tensors
    grad_a, grad_b = None, None
    if ctx.needs_input_grad[0]:
        grad_a = grad * b
    if ctx.needs_input_grad[1]:
        grad_b = grad * a
    return grad_a, grad_b, None


torch.library.register_autograd("compat_kernels::muladd", _backward,
                                setup_context=_setup_context)
