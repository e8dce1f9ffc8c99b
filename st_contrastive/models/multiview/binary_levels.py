"""The binary Tree-LSTM's inner levels as one autograd step with a backward of its own.

Through autograd, each level's gather of its children from the node buffer costs a node-sized zero-filled gradient
and a scatter, and each write a node-sized copy, in the backward pass: as much time as the cell's matrix products.
Here the backward walks the levels down with one gradient buffer for every node, reads each level's rows, and adds
its children's gradients into that buffer in place: per level two matrix products, a few elementwise operations on
the level's rows, one gather and one scatter. torch has no fused tree-recurrence kernel (its fused LSTMs run over
sequences), hence this one.
"""

from __future__ import annotations

import torch


class BinaryLevels(torch.autograd.Function):
    """``(states, bias, weight, children, levels) -> states``: the leaves' rows of ``states`` (nodes, 2H: h then c)
    are given; every inner level in turn fills its nodes' rows from their two children (``children[node]`` = left,
    right). Gates (i, f_L, f_R, o, u) = bias + [h_L; h_R] @ weightᵀ; c = i ⊙ tanh(u) + f_L ⊙ c_L + f_R ⊙ c_R;
    h = o ⊙ tanh(c), with i, f_L, f_R, o through a sigmoid."""

    @staticmethod
    def forward(ctx, states, bias, weight, children, levels):
        H = states.shape[1] // 2
        states = states.clone()
        ctx.parameter_dtypes = (bias.dtype, weight.dtype)  # the gradients go back in them
        bias, weight = bias.to(states.dtype), weight.to(states.dtype)  # bfloat16 states under autocast
        saved = []
        for nodes in levels:
            pair = children[nodes]
            below = states[pair]  # (n, 2, 2H)
            gates = torch.addmm(bias, below[..., :H].flatten(1), weight.T)
            sigmoids = torch.sigmoid(gates[:, : 4 * H])
            u = torch.tanh(gates[:, 4 * H :])
            i, f_left, f_right, o = sigmoids.chunk(4, dim=1)
            cell = i * u + f_left * below[:, 0, H:] + f_right * below[:, 1, H:]
            tanh_cell = torch.tanh(cell)
            states[nodes] = torch.cat([o * tanh_cell, cell], dim=1)
            saved.append((sigmoids, u, tanh_cell))
        ctx.save_for_backward(states, weight, children, *levels)
        ctx.saved_gates = saved
        return states

    @staticmethod
    def backward(ctx, grad_states):
        states, weight, children, *levels = ctx.saved_tensors
        H = states.shape[1] // 2
        grad = grad_states.clone()  # (nodes, 2H): dL/dh and dL/dc of every node, the children's added in as we go
        grad_bias = weight.new_zeros(weight.shape[0])
        grad_weight = torch.zeros_like(weight)
        for nodes, (sigmoids, u, tanh_cell) in zip(reversed(levels), reversed(ctx.saved_gates), strict=True):
            i, f_left, f_right, o = sigmoids.chunk(4, dim=1)
            pair = children[nodes]
            below = states[pair]
            d_h, d_c = grad[nodes].split(H, dim=1)
            d_c = d_c + d_h * o * (1 - tanh_cell * tanh_cell)
            d_gates = torch.cat(
                [
                    d_c * u * i * (1 - i),
                    d_c * below[:, 0, H:] * f_left * (1 - f_left),
                    d_c * below[:, 1, H:] * f_right * (1 - f_right),
                    d_h * tanh_cell * o * (1 - o),
                    d_c * i * (1 - u * u),
                ],
                dim=1,
            )
            children_h = below[..., :H].flatten(1)
            grad_weight.addmm_(d_gates.T, children_h)
            grad_bias += d_gates.sum(0)
            d_children_h = (d_gates @ weight).view(-1, 2, H)
            d_children_c = torch.stack([d_c * f_left, d_c * f_right], dim=1)
            grad.index_add_(0, pair.flatten(), torch.cat([d_children_h, d_children_c], dim=2).flatten(0, 1))
            grad[nodes] = 0  # the level's own rows are the leaves' no more: only the leaves' gradient goes out
        bias_dtype, weight_dtype = ctx.parameter_dtypes
        return grad, grad_bias.to(bias_dtype), grad_weight.to(weight_dtype), None, None
