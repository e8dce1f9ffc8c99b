"""NT-Xent (SimCLR's normalized temperature-scaled cross-entropy), the contrastive term of DeCLUTR."""

from __future__ import annotations

import torch

from st_contrastive.losses.contrastive_core import gather_candidates, similarity_matrix, supcon


def nt_xent(
    anchors: torch.Tensor, positives: torch.Tensor, temperature: float, gather_across_devices: bool = False
) -> torch.Tensor:
    """Mean NT-Xent over the ``2M`` items of ``M`` (anchor, positive) pairs.

    Each item's positive is its partner; every other anchor and positive is a negative (both directions, as in
    SimCLR and DeCLUTR's Eq. 2). That is SupCon with the pair index as the label, so it is computed by the
    package's one :func:`~st_contrastive.losses.contrastive_core.supcon`, on cosine similarities in float32.
    With ``gather_across_devices`` the local items are scored against the items of every rank, so the number
    of negatives grows with the number of devices.
    """
    items = torch.cat([anchors, positives])
    pair = torch.arange(len(anchors), device=items.device).repeat(2)
    candidates = gather_candidates(items, pair, gather_across_devices=gather_across_devices, local_ids=True)
    not_self = candidates.not_self(len(items))
    partner = (pair + candidates.offset)[:, None] == candidates.labels[None, :]
    loss, _ = supcon(
        similarity_matrix(items, candidates.embeddings),
        partner,
        not_self,
        temperature,
        gather_across_devices=gather_across_devices,
    )
    return loss
