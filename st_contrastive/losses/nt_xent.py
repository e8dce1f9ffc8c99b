"""NT-Xent (SimCLR's normalized temperature-scaled cross-entropy), the contrastive core of DeCLUTR."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from sentence_transformers.util import all_gather_with_grad, get_rank


def nt_xent(anchors: torch.Tensor, positives: torch.Tensor, temperature: float, gather_across_devices: bool = False) -> torch.Tensor:
    """Mean NT-Xent over the ``2M`` items of ``M`` (anchor, positive) pairs.

    Each item's positive is its partner; every other anchor and positive is a negative (both directions, as in
    SimCLR and DeCLUTR's Eq. 2). Cosine similarities are computed in float32, even under autocast. With
    ``gather_across_devices`` the local items are scored against the items of every rank (gradients kept for
    the local ones), so the number of negatives grows with the number of devices.
    """
    local = F.normalize(torch.cat([anchors, positives]).float(), dim=-1)
    num_pairs = len(anchors)
    if gather_across_devices:
        gathered_anchors = all_gather_with_grad(F.normalize(anchors.float(), dim=-1))
        gathered_positives = all_gather_with_grad(F.normalize(positives.float(), dim=-1))
        candidates = torch.cat([gathered_anchors, gathered_positives])
        total_pairs, offset = len(gathered_anchors), get_rank() * num_pairs if len(gathered_anchors) > num_pairs else 0
    else:
        candidates, total_pairs, offset = local, num_pairs, 0
    rows = torch.arange(num_pairs, device=local.device) + offset
    # Local anchor i sits at global row i + offset; its partner is total_pairs rows away.
    self_index = torch.cat([rows, rows + total_pairs])
    partner = torch.cat([rows + total_pairs, rows])
    logits = local @ candidates.T / temperature
    logits[torch.arange(len(local), device=local.device), self_index] = float("-inf")
    return F.cross_entropy(logits, partner)
