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
            child = states[edge_child]
            child_h, child_c = child.split(H, dim=1)
            from_children = F.linear(child_h, child_weight, child_bias)
            forget = torch.sigmoid(gates[parent, 3 * H : 4 * H] + from_children[:, :H])
            alpha = None
            if attention:
                scores = F.cosine_similarity(gates[parent, 4 * H :], from_children[:, H:], dim=-1)
                weights = scores.exp()  # cosine is in [-1, 1]: no overflow, no max to subtract
                alpha = weights / weights.new_zeros(n).index_add(0, parent, weights)[parent]
                child_h = alpha[:, None] * child_h
            sums = child.new_zeros(n, 2 * H).index_add(0, parent, torch.cat([child_h, forget * child_c], dim=1))
            iou = gates[:, : 3 * H] + sums[:, :H] @ iou_weight.T
            io = torch.sigmoid(iou[:, : 2 * H])
            u = torch.tanh(iou[:, 2 * H :])
            cell = io[:, :H] * u + sums[:, H:]
            tanh_cell = torch.tanh(cell)
            states[nodes] = torch.cat([io[:, H:] * tanh_cell, cell], dim=1)
            saved.append((gates, from_children, forget, alpha, sums[:, :H], io, u, tanh_cell))
        ctx.save_for_backward(states, iou_weight, child_weight)
        ctx.levels, ctx.saved_levels, ctx.attention = levels, saved, attention
        return states

    @staticmethod
    def backward(ctx, grad_states):
        states, iou_weight, child_weight = ctx.saved_tensors
        H = states.shape[1] // 2
        grad = grad_states.clone()  # dL/dh and dL/dc of every node, the children's added in as the levels go down
        grad_gates, grad_iou_weight = [], torch.zeros_like(iou_weight)
        grad_child_weight = torch.zeros_like(child_weight)
        grad_key_bias = child_weight.new_zeros(H) if ctx.attention else None
        for (nodes, edge_child, parent), (gates, from_children, forget, alpha, h_tilde, io, u, tanh_cell) in zip(
            reversed(ctx.levels), reversed(ctx.saved_levels), strict=True
        ):
            i, o = io.split(H, dim=1)
            child = states[edge_child]
            child_h, child_c = child.split(H, dim=1)
            d_h, d_c = grad[nodes].split(H, dim=1)
            d_c = d_c + d_h * o * (1 - tanh_cell * tanh_cell)
            d_iou = torch.cat([d_c * u * i * (1 - i), d_h * tanh_cell * o * (1 - o), d_c * i * (1 - u * u)], dim=1)
            grad_iou_weight.addmm_(d_iou.T, h_tilde)
            d_h_tilde = (d_iou @ iou_weight)[parent]  # per edge
            d_c_edge = d_c[parent]
            d_forget = d_c_edge * child_c * forget * (1 - forget)  # through the sigmoid
            d_child_c = d_c_edge * forget
            d_query = None
            if ctx.attention:
                d_child_h = alpha[:, None] * d_h_tilde
                d_alpha = (d_h_tilde * child_h).sum(1)
                total = d_alpha.new_zeros(len(nodes)).index_add(0, parent, d_alpha * alpha)
                # alpha = w / Z: dw = (d_alpha − Σ d_alpha·alpha) / Z, and w = exp(s): ds = dw · w = dw · alpha · Z
                d_scores = (d_alpha - total[parent]) * alpha
                query, key = gates[parent, 4 * H :], from_children[:, H:]
                query_norm = query.norm(dim=1, keepdim=True)
                key_norm = key.norm(dim=1, keepdim=True)
                cosine = (query * key).sum(1, keepdim=True) / (query_norm * key_norm)
                d_s = d_scores[:, None]
                d_query_edge = d_s * (key / (query_norm * key_norm) - cosine * query / query_norm**2)
                d_key = d_s * (query / (query_norm * key_norm) - cosine * key / key_norm**2)
                d_query = d_query_edge.new_zeros(len(nodes), H).index_add(0, parent, d_query_edge)
                d_from = torch.cat([d_forget, d_key], dim=1)
                grad_key_bias += d_key.sum(0)
            else:
                d_child_h = d_h_tilde
                d_from = d_forget
            grad_child_weight.addmm_(d_from.T, child_h)
            d_child_h = d_child_h + d_from @ child_weight
            d_f = d_forget.new_zeros(len(nodes), H).index_add(0, parent, d_forget)
            grad_gates.append(torch.cat([d_iou, d_f] + ([d_query] if ctx.attention else []), dim=1))
            grad.index_add_(0, edge_child, torch.cat([d_child_h, d_child_c], dim=1))
            grad[nodes] = 0  # an inner node's rows are no input: only the leaves' gradient goes out
        iou_dtype, child_dtype, key_dtype = ctx.parameter_dtypes
        return (
            grad,
            torch.cat(grad_gates[::-1]),
            grad_iou_weight.to(iou_dtype),
            grad_child_weight.to(child_dtype),
            grad_key_bias.to(key_dtype) if ctx.attention else None,
            None,
        )
