"""A Tree-LSTM node's state row, h and c side by side (2H columns), from its i, o and u gates, and back.

The level steps (binary_levels.py, child_sum_levels.py) keep every node's row in one (nodes, 2H) buffer: one gather
reads a level's children's h and c, one write sets a level's rows, and one scatter adds the children's gradients.
The leaves of both cells and the child-sum cell's inner nodes share the last step, c = i ⊙ u + (what the children
carry), h = o ⊙ tanh(c); it is written once here, forward and backward, with outputs written in place.
"""

from __future__ import annotations

import torch


def iou_rows(iou: torch.Tensor, carried: torch.Tensor | None = None) -> tuple[torch.Tensor, tuple]:
    """The rows [h, c] from i, o, u's pre-activations ``iou`` (n, 3H) and the cell state the children carry (n, H;
    None for leaves), and what :func:`iou_gradient` needs."""
    H = iou.shape[1] // 3
    io = torch.sigmoid(iou[:, : 2 * H])  # i and o's sigmoids in one kernel
    u = torch.tanh(iou[:, 2 * H :])
    rows = iou.new_empty(len(iou), 2 * H)  # h and c written in place: no concatenation
    if carried is None:
        cell = torch.mul(io[:, :H], u, out=rows[:, H:])
    else:
        cell = torch.addcmul(carried, io[:, :H], u, out=rows[:, H:])
    tanh_cell = torch.tanh(cell)
    torch.mul(io[:, H:], tanh_cell, out=rows[:, :H])
    return rows, (io, u, tanh_cell)


def iou_gradient(d_rows: torch.Tensor, saved: tuple, out: torch.Tensor) -> torch.Tensor:
    """Writes the gradient of i, o, u's pre-activations into ``out`` (n, 3H) from the rows' gradient ``d_rows``
    (n, 2H: dL/dh, dL/dc) and returns dL/dc with h's share added: what flows on into the carried cell state."""
    io, u, tanh_cell = saved
    H = u.shape[1]
    i, o = io.split(H, dim=1)
    d_h, d_c = d_rows.split(H, dim=1)
    d_c = d_c + torch.ops.aten.tanh_backward(d_h * o, tanh_cell)
    torch.mul(d_c, u, out=out[:, :H])
    torch.mul(d_h, tanh_cell, out=out[:, H : 2 * H])
    torch.ops.aten.sigmoid_backward.grad_input(out[:, : 2 * H], io, grad_input=out[:, : 2 * H])  # in place
    torch.ops.aten.tanh_backward.grad_input(d_c * i, u, grad_input=out[:, 2 * H :])
    return d_c


def as_outputs(ctx, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(h, c)``, views of ``states``, as a level step's two outputs. A caller that reads only h gives no gradient
    for c: it arrives as None (no zeros made for it, no concatenation as a split's backward would make)."""
    ctx.set_materialize_grads(False)
    H = states.shape[1] // 2
    return states[:, :H], states[:, H:]


def gradient_buffer(grad_h: torch.Tensor | None, grad_c: torch.Tensor | None) -> torch.Tensor | None:
    """One (nodes, 2H) buffer of dL/dh and dL/dc (zeros for the one not given) that the backward adds the children's
    gradients into in place; None when neither is given (no gradient flows back)."""
    given = grad_h if grad_h is not None else grad_c
    if given is None:
        return None
    nodes, H = given.shape
    grad = given.new_empty(nodes, 2 * H)
    for part, value in ((grad[:, :H], grad_h), (grad[:, H:], grad_c)):
        if value is None:
            part.zero_()
        else:
            part.copy_(value)
    return grad
