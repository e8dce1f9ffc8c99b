"""The child-sum Tree-LSTM's inner levels as one autograd step with a backward of its own (see binary_levels.py
for why): one gradient buffer for every node, each level's children's gradients added into it in place."""

from __future__ import annotations

import torch
import torch.nn.functional as F


class ChildSumLevels(torch.autograd.Function):
    """``(states, inner_gates, iou_weight, child_weight, key_bias, levels) -> states``.

    ``states`` (nodes, 2H: h then c) holds the leaves' rows; ``inner_gates`` the inner nodes' gates from their words,
    level after level (i, o, u, f, and with attention the query: 4H or 5H columns); ``levels`` is each inner level's
    (nodes, edge_child, edge_parent_position). Per node j: f_k = σ(f_j + U^f h_k) per child k; with attention
    α_k = softmax over the children of cos(query_j, W_p h_k + b_p) and h̃ = Σ α_k h_k, else h̃ = Σ h_k;
    i, o = σ(i_j + U^{io} h̃), u = tanh(u_j + U^u h̃); c = i ⊙ u + Σ f_k ⊙ c_k; h = o ⊙ tanh(c)."""

    @staticmethod
    def forward(ctx, states, inner_gates, iou_weight, child_weight, key_bias, levels):
        H = states.shape[1] // 2
        attention = key_bias is not None
        ctx.parameter_dtypes = (iou_weight.dtype, child_weight.dtype, key_bias.dtype if attention else None)
        dtype = states.dtype  # bfloat16 under autocast
        iou_weight, child_weight = iou_weight.to(dtype), child_weight.to(dtype)
        child_bias = torch.cat([key_bias.new_zeros(H), key_bias]).to(dtype) if attention else None
        inner_gates = inner_gates.to(dtype)
        states = states.clone()
        saved, first = [], 0
        for nodes, edge_child, parent in levels:
            n = len(nodes)
            gates, first = inner_gates[first : first + n], first + n
            # The children's h and c gathered apart (contiguous, no copy) and kept: the backward gathers nothing again.
            child_h, child_c = states[:, :H][edge_child], states[:, H:][edge_child]
            from_children = F.linear(child_h, child_weight, child_bias)
            forget = torch.sigmoid(gates[parent, 3 * H : 4 * H] + from_children[:, :H])
            alpha, summed_h = None, child_h
            if attention:
                scores = F.cosine_similarity(gates[parent, 4 * H :], from_children[:, H:], dim=-1)
                weights = scores.exp()  # cosine is in [-1, 1]: no overflow, no max to subtract
                alpha = weights / weights.new_zeros(n).index_add(0, parent, weights)[parent]
                summed_h = alpha[:, None] * child_h
            h_tilde = child_h.new_zeros(n, H).index_add_(0, parent, summed_h)
            c_sum = child_h.new_zeros(n, H).index_add_(0, parent, forget * child_c)
            iou = torch.addmm(gates[:, : 3 * H], h_tilde, iou_weight.T)
            io = torch.sigmoid(iou[:, : 2 * H])
            u = torch.tanh(iou[:, 2 * H :])
            rows = states.new_empty(n, 2 * H)  # the level's h and c, written in place: no concatenation
            cell = torch.addcmul(c_sum, io[:, :H], u, out=rows[:, H:])
            tanh_cell = torch.tanh(cell)
            torch.mul(io[:, H:], tanh_cell, out=rows[:, :H])
            states[nodes] = rows
            saved.append((child_h, child_c, gates, from_children, forget, alpha, h_tilde, io, u, tanh_cell))
        ctx.save_for_backward(iou_weight, child_weight)
        ctx.levels, ctx.saved_levels, ctx.attention = levels, saved, attention
        ctx.gate_shape = inner_gates.shape
        return states

    @staticmethod
    def backward(ctx, grad_states):
        iou_weight, child_weight = ctx.saved_tensors
        H = iou_weight.shape[1]
        grad = grad_states.clone()  # dL/dh and dL/dc of every node, the children's added in as the levels go down
        # The inner nodes' gate gradients, each level's rows written in place (the levels are consecutive rows).
        grad_gates = grad.new_empty(ctx.gate_shape)
        last = ctx.gate_shape[0]
        grad_iou_weight, grad_child_weight = torch.zeros_like(iou_weight), torch.zeros_like(child_weight)
        grad_key_bias = child_weight.new_zeros(H) if ctx.attention else None
        for (nodes, edge_child, parent), saved in zip(reversed(ctx.levels), reversed(ctx.saved_levels), strict=True):
            child_h, child_c, gates, from_children, forget, alpha, h_tilde, io, u, tanh_cell = saved
            n = len(nodes)
            level_grad, last = grad_gates[last - n : last], last - n
            i, o = io.split(H, dim=1)
            d_h, d_c = grad[nodes].split(H, dim=1)
            d_c = d_c + torch.ops.aten.tanh_backward(d_h * o, tanh_cell)
            # i, o and u's gradients before their nonlinearities, written side by side; i and o's sigmoids in one
            # fused kernel, in place.
            d_iou = level_grad[:, : 3 * H]
            torch.mul(d_c, u, out=d_iou[:, :H])
            torch.mul(d_h, tanh_cell, out=d_iou[:, H : 2 * H])
            torch.ops.aten.sigmoid_backward.grad_input(d_iou[:, : 2 * H], io, grad_input=d_iou[:, : 2 * H])
            torch.ops.aten.tanh_backward.grad_input(d_c * i, u, grad_input=d_iou[:, 2 * H :])
            grad_iou_weight.addmm_(d_iou.T, h_tilde)
            d_h_tilde = (d_iou @ iou_weight)[parent]  # per edge
            d_c_edge = d_c[parent]
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
                query, key = gates[parent, 4 * H :], from_children[:, H:]
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
            grad[nodes] = 0  # an inner node's rows are no input: only the leaves' gradient goes out
        iou_dtype, child_dtype, key_dtype = ctx.parameter_dtypes
        return (
            grad,
            grad_gates,
            grad_iou_weight.to(iou_dtype),
            grad_child_weight.to(child_dtype),
            grad_key_bias.to(key_dtype) if ctx.attention else None,
            None,
        )
