"""The binary Tree-LSTM's inner levels as one autograd step with a backward of its own.

Through autograd, each level's gather of its children from the node buffer costs a node-sized zero-filled gradient
and a scatter, and each write a node-sized copy, in the backward pass: as much time as the cell's matrix products.
Here the backward walks the levels down with one gradient buffer for every node, reads each level's rows, and adds
its children's gradients into that buffer in place: per level two matrix products, a few elementwise operations on
the level's rows (the gates' derivatives in torch's fused sigmoid and tanh backward kernels) and one scatter; the
children's rows are the ones the forward pass gathered. torch has no fused tree-recurrence kernel (its fused LSTMs
run over sequences), hence this one.
"""

from __future__ import annotations

import torch

from st_contrastive.models.multiview.node_states import as_outputs, gradient_buffer, iou_gradient, iou_rows


class BinaryLevels(torch.autograd.Function):
    """``(leaf_gates, bias, weight, leaves, children, levels) -> (h, c)`` of every node. ``leaf_gates`` are the
    leaves' i, o, u before their nonlinearities (a leaf has no children: c = i ⊙ u), in the order of ``leaves``,
    their nodes; every inner level in turn fills its nodes' rows from their two children (``children[node]`` = left,
    right). Gates (i, f_L, f_R, o, u) = bias + [h_L; h_R] @ weightᵀ; c = i ⊙ tanh(u) + f_L ⊙ c_L + f_R ⊙ c_R;
    h = o ⊙ tanh(c), with i, f_L, f_R, o through a sigmoid."""

    @staticmethod
    def forward(ctx, leaf_gates, bias, weight, leaves, children, levels):
        H = leaf_gates.shape[1] // 3
        ctx.parameter_dtypes = (bias.dtype, weight.dtype)  # the gradients go back in them
        bias, weight = bias.to(leaf_gates.dtype), weight.to(leaf_gates.dtype)  # bfloat16 gates under autocast
        # h and c of every node side by side; every row is written, the leaves' first, then each level's.
        states = leaf_gates.new_empty(len(children), 2 * H)
        rows, ctx.saved_leaves = iou_rows(leaf_gates)
        states[leaves] = rows
        saved = []
        for nodes in levels:
            pair = children[nodes]
            # The children's h and c gathered apart: [h_L; h_R] comes out as the product's rows, no copy, and both
            # are kept for the backward pass, which gathers nothing again.
            children_h, children_c = states[:, :H][pair].flatten(1), states[:, H:][pair]
            gates = torch.addmm(bias, children_h, weight.T)
            sigmoids = torch.sigmoid(gates[:, : 4 * H])
            u = torch.tanh(gates[:, 4 * H :])
            i, f_left, f_right, o = sigmoids.chunk(4, dim=1)
            rows = states.new_empty(len(nodes), 2 * H)  # the level's h and c, written in place: no concatenation
            cell = torch.addcmul(i * u, f_left, children_c[:, 0], out=rows[:, H:])
            cell.addcmul_(f_right, children_c[:, 1])
            tanh_cell = torch.tanh(cell)
            torch.mul(o, tanh_cell, out=rows[:, :H])
            states[nodes] = rows
            saved.append((pair, children_h, children_c, sigmoids, u, tanh_cell))
        ctx.save_for_backward(weight, leaves, *levels)
        ctx.saved_gates = saved
        return as_outputs(ctx, states)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        weight, leaves, *levels = ctx.saved_tensors
        H = weight.shape[1] // 2
        grad = gradient_buffer(grad_h, grad_c)  # dL/dh and dL/dc of every node, the children's added in as we go
        if grad is None:
            return (None,) * 6
        grad_bias = weight.new_zeros(weight.shape[0])
        grad_weight = torch.zeros_like(weight)
        for nodes, (pair, children_h, children_c, sigmoids, u, tanh_cell) in zip(
            reversed(levels), reversed(ctx.saved_gates), strict=True
        ):
            i, f_left, f_right, o = sigmoids.chunk(4, dim=1)
            d_h, d_c = grad[nodes].split(H, dim=1)
            d_c = d_c + torch.ops.aten.tanh_backward(d_h * o, tanh_cell)
            # Each gate's gradient before its nonlinearity, written side by side; the four sigmoids' derivatives in
            # one fused kernel over them, in place.
            d_gates = grad.new_empty(len(nodes), 5 * H)
            torch.mul(d_c, u, out=d_gates[:, :H])
            torch.mul(d_c, children_c[:, 0], out=d_gates[:, H : 2 * H])
            torch.mul(d_c, children_c[:, 1], out=d_gates[:, 2 * H : 3 * H])
            torch.mul(d_h, tanh_cell, out=d_gates[:, 3 * H : 4 * H])
            torch.ops.aten.sigmoid_backward.grad_input(d_gates[:, : 4 * H], sigmoids, grad_input=d_gates[:, : 4 * H])
            torch.ops.aten.tanh_backward.grad_input(d_c * i, u, grad_input=d_gates[:, 4 * H :])
            grad_weight.addmm_(d_gates.T, children_h)
            grad_bias += d_gates.sum(0)
            d_children = grad.new_empty(len(nodes), 2, 2 * H)  # each child's dL/dh and dL/dc, for one scatter
            d_children[..., :H] = (d_gates @ weight).view(-1, 2, H)
            torch.mul(d_c, f_left, out=d_children[:, 0, H:])
            torch.mul(d_c, f_right, out=d_children[:, 1, H:])
            grad.index_add_(0, pair.flatten(), d_children.flatten(0, 1))
        grad_leaf_gates = grad.new_empty(len(leaves), 3 * H)
        iou_gradient(grad[leaves], ctx.saved_leaves, out=grad_leaf_gates)
        bias_dtype, weight_dtype = ctx.parameter_dtypes
        return grad_leaf_gates, grad_bias.to(bias_dtype), grad_weight.to(weight_dtype), None, None, None
