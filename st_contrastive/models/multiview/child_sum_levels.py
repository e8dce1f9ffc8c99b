"""The child-sum Tree-LSTM's inner levels as one autograd step with a backward of its own (see binary_levels.py
for why): one gradient buffer for every node, each level's children's gradients added into it in place."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from st_contrastive.models.multiview.node_states import as_outputs, gradient_buffer, iou_gradient, iou_rows


class ChildSumLevels(torch.autograd.Function):
    """``(leaf_gates, inner_gates, iou_weight, child_weight, key_bias, leaves, levels) -> (h, c)`` of every node.

    ``leaf_gates`` are the leaves' i, o, u before their nonlinearities (a leaf has no children: c = i ⊙ u), in the
    order of ``leaves``, their nodes; ``inner_gates`` the inner nodes' gates from their words, level after level
    (i, o, u, f, and with attention the query: 4H or 5H columns); ``levels`` is each inner level's
    (nodes, edge_child, edge_parent_position). Per node j: f_k = σ(f_j + U^f h_k) per child k; with attention
    α_k = softmax over the children of cos(query_j, W_p h_k + b_p) and h̃ = Σ α_k h_k, else h̃ = Σ h_k;
    i, o = σ(i_j + U^{io} h̃), u = tanh(u_j + U^u h̃); c = i ⊙ u + Σ f_k ⊙ c_k; h = o ⊙ tanh(c)."""

    @staticmethod
    def forward(ctx, leaf_gates, inner_gates, iou_weight, child_weight, key_bias, leaves, levels):
        H = leaf_gates.shape[1] // 3
        attention = key_bias is not None
        ctx.parameter_dtypes = (iou_weight.dtype, child_weight.dtype, key_bias.dtype if attention else None)
        dtype = leaf_gates.dtype  # bfloat16 under autocast
        iou_weight, child_weight = iou_weight.to(dtype), child_weight.to(dtype)
        child_bias = torch.cat([key_bias.new_zeros(H), key_bias]).to(dtype) if attention else None
        inner_gates = inner_gates.to(dtype)
        # h and c of every node side by side; every row is written, the leaves' first, then each level's.
        states = leaf_gates.new_empty(len(leaf_gates) + len(inner_gates), 2 * H)
        rows, ctx.saved_leaves = iou_rows(leaf_gates)
        states[leaves] = rows
        saved, first = [], 0
        for nodes, edge_child, parent in levels:
            n = len(nodes)
            gates, first = inner_gates[first : first + n], first + n
            # The children's h and c gathered apart (contiguous, no copy) and kept: the backward gathers nothing again.
            child_h, child_c = states[:, :H].index_select(0, edge_child), states[:, H:].index_select(0, edge_child)
            from_children = F.linear(child_h, child_weight, child_bias)
            forget = torch.sigmoid(gates[:, 3 * H : 4 * H].index_select(0, parent) + from_children[:, :H])
            alpha, summed_h = None, child_h
            if attention:
                scores = F.cosine_similarity(gates[:, 4 * H :].index_select(0, parent), from_children[:, H:], dim=-1)
                weights = scores.exp()  # cosine is in [-1, 1]: no overflow, no max to subtract
                alpha = weights / weights.new_zeros(n).index_add(0, parent, weights)[parent]
                summed_h = alpha[:, None] * child_h
            h_tilde = child_h.new_zeros(n, H).index_add_(0, parent, summed_h)
            c_sum = child_h.new_zeros(n, H).index_add_(0, parent, forget * child_c)
            rows, iou_saved = iou_rows(torch.addmm(gates[:, : 3 * H], h_tilde, iou_weight.T), carried=c_sum)
            states[nodes] = rows
            saved.append((child_h, child_c, gates, from_children, forget, alpha, h_tilde, iou_saved))
        ctx.save_for_backward(iou_weight, child_weight, leaves)
        ctx.levels, ctx.saved_levels, ctx.attention = levels, saved, attention
        ctx.gate_shape = inner_gates.shape
        return as_outputs(ctx, states)

    @staticmethod
    def backward(ctx, grad_h, grad_c):
        iou_weight, child_weight, leaves = ctx.saved_tensors
        H = iou_weight.shape[1]
        grad = gradient_buffer(grad_h, grad_c)  # dL/dh and dL/dc of every node, the children's added in as we go
        if grad is None:
            return (None,) * 7
        # The inner nodes' gate gradients, each level's rows written in place (the levels are consecutive rows).
        grad_gates = grad.new_empty(ctx.gate_shape)
        last = ctx.gate_shape[0]
        grad_iou_weight, grad_child_weight = torch.zeros_like(iou_weight), torch.zeros_like(child_weight)
        grad_key_bias = child_weight.new_zeros(H) if ctx.attention else None
        for (nodes, edge_child, parent), saved in zip(reversed(ctx.levels), reversed(ctx.saved_levels), strict=True):
            child_h, child_c, gates, from_children, forget, alpha, h_tilde, iou_saved = saved
            n = len(nodes)
            level_grad, last = grad_gates[last - n : last], last - n
            d_iou = level_grad[:, : 3 * H]
            d_c = iou_gradient(grad.index_select(0, nodes), iou_saved, out=d_iou)
            grad_iou_weight.addmm_(d_iou.T, h_tilde)
            d_h_tilde = (d_iou @ iou_weight).index_select(0, parent)  # per edge
            d_c_edge = d_c.index_select(0, parent)
            d_child = grad.new_empty(len(edge_child), 2 * H)  # each child's dL/dh and dL/dc, for one scatter
            torch.mul(d_c_edge, forget, out=d_child[:, H:])
            # U^f's and (attention) the key's gradients side by side: one product back to the children's h
            d_from = grad.new_empty(len(edge_child), child_weight.shape[0])
            d_forget = torch.ops.aten.sigmoid_backward.grad_input(d_c_edge * child_c, forget, grad_input=d_from[:, :H])
            level_grad[:, 3 * H : 4 * H].zero_().index_add_(0, parent, d_forget)
            if ctx.attention:
                d_child_h = alpha[:, None] * d_h_tilde
                d_alpha = (d_h_tilde * child_h).sum(1)
                total = d_alpha.new_zeros(n).index_add(0, parent, d_alpha * alpha)
                # alpha = w / Z: dw = (d_alpha − Σ d_alpha·alpha) / Z, and w = exp(s): ds = dw · w = dw · alpha · Z
                d_scores = (d_alpha - total[parent]) * alpha
                query, key = gates[:, 4 * H :].index_select(0, parent), from_children[:, H:]
                query_norm = query.norm(dim=1, keepdim=True)
                key_norm = key.norm(dim=1, keepdim=True)
                cosine = (query * key).sum(1, keepdim=True) / (query_norm * key_norm)
                d_s = d_scores[:, None]
                d_query_edge = d_s * (key / (query_norm * key_norm) - cosine * query / query_norm**2)
                d_key = d_from[:, H:]
                torch.mul(d_s, query / (query_norm * key_norm) - cosine * key / key_norm**2, out=d_key)
                level_grad[:, 4 * H :].zero_().index_add_(0, parent, d_query_edge)
                grad_key_bias += d_key.sum(0)
            else:
                d_child_h = d_h_tilde
            grad_child_weight.addmm_(d_from.T, child_h)
            torch.addmm(d_child_h, d_from, child_weight, out=d_child[:, :H])
            grad.index_add_(0, edge_child, d_child)
        grad_leaf_gates = grad.new_empty(len(leaves), 3 * H)
        iou_gradient(grad.index_select(0, leaves), ctx.saved_leaves, out=grad_leaf_gates)
        iou_dtype, child_dtype, key_dtype = ctx.parameter_dtypes
        return (
            grad_leaf_gates,
            grad_gates,
            grad_iou_weight.to(iou_dtype),
            grad_child_weight.to(child_dtype),
            grad_key_bias.to(key_dtype) if ctx.attention else None,
            None,
            None,
        )
