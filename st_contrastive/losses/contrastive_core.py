"""The contrastive core every loss of the package shares: similarities, the cross-device gather, and SupCon.

NT-Xent (DeCLUTR), label-based SupCon and premise-anchored SupCon (NLI) differ only in which candidates are
positives for which anchor, so all three are :func:`supcon` over a :func:`similarity_matrix` of the local anchors
against the :func:`gather_candidates` of every device.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.distributed as dist
import torch.nn.functional as F
from sentence_transformers.util import all_gather_with_grad

Similarity = Literal["cosine", "dot"]


def similarity_matrix(
    anchors: torch.Tensor, candidates: torch.Tensor, similarity: Similarity = "cosine"
) -> torch.Tensor:
    """Anchor × candidate similarities in float32 (even under autocast, which would run the product in bf16/fp16)."""
    if similarity not in ("cosine", "dot"):
        raise ValueError(f"similarity must be 'cosine' or 'dot', not {similarity!r}")
    with torch.autocast(anchors.device.type, enabled=False):
        anchors, candidates = anchors.float(), candidates.float()
        if similarity == "cosine":
            anchors, candidates = F.normalize(anchors, dim=-1), F.normalize(candidates, dim=-1)
        return anchors @ candidates.T


@dataclass
class Candidates:
    """The rows local anchors are scored against: this device's rows, or every device's in rank order.

    ``offset`` is the row at which this device's own rows start among them, so local row ``i`` is candidate
    ``offset + i``.
    """

    embeddings: torch.Tensor
    labels: torch.Tensor | None
    offset: int

    def not_self(self, num_rows: int) -> torch.Tensor:
        """``(num_rows, candidates)`` mask that is False where local row ``i`` meets itself."""
        mask = torch.ones(num_rows, len(self.embeddings), dtype=torch.bool, device=self.embeddings.device)
        mask.diagonal(self.offset).fill_(False)  # (i, i + offset); an indexed assignment would wait for a GPU
        return mask


def gather_candidates(
    embeddings: torch.Tensor,
    labels: torch.Tensor | None = None,
    *,
    gather_across_devices: bool = False,
    local_ids: bool = False,
) -> Candidates:
    """This device's ``embeddings`` (and ``labels``), or with ``gather_across_devices`` those of every rank.

    The gather keeps the gradient of every rank's rows (``torch.distributed.nn.all_gather``: its backward sums
    each row's gradient over the ranks, so with DDP's mean the gradient is that of the global loss, without the
    1/world-size error of the reference DeCLUTR code). Ranks may hold different numbers of rows (an uneven last
    batch): sizes are gathered first and rows padded to the largest. ``local_ids=True`` says the labels are ids
    that mean something only within one rank's batch (pair or premise-group ids): non-negative ids are shifted by
    their rank's ``offset`` so that they are unique across ranks; negative ids mean "none" and stay as they are.
    """
    if not (gather_across_devices and dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return Candidates(embeddings, labels, 0)
    size = torch.tensor([len(embeddings)], device=embeddings.device)
    sizes = [torch.zeros_like(size) for _ in range(dist.get_world_size())]
    dist.all_gather(sizes, size)
    sizes = [int(s) for s in sizes]
    offsets = [sum(sizes[:rank]) for rank in range(len(sizes))]
    longest = max(sizes)

    def gather(tensor: torch.Tensor, with_grad: bool) -> torch.Tensor:
        padded = F.pad(tensor, (0, 0) * (tensor.dim() - 1) + (0, longest - len(tensor)))
        if with_grad:
            blocks = all_gather_with_grad(padded).split(longest)
        else:
            blocks = [torch.empty_like(padded) for _ in sizes]
            dist.all_gather(blocks, padded.contiguous())
        return torch.cat([block[:n] for block, n in zip(blocks, sizes)])

    gathered_labels = None
    if labels is not None:
        gathered_labels = gather(labels, with_grad=False)
        if local_ids:
            shift = torch.repeat_interleave(
                torch.tensor(offsets, device=labels.device), torch.tensor(sizes, device=labels.device)
            )
            gathered_labels = torch.where(gathered_labels >= 0, gathered_labels + shift, gathered_labels)
    return Candidates(gather(embeddings, with_grad=True), gathered_labels, offsets[dist.get_rank()])


def global_mean_factor(
    local_count: int | torch.Tensor, device: torch.device, *, gather_across_devices: bool = False
) -> float:
    """What turns this rank's mean over ``local_count`` items into its share of the mean over every rank's items.

    DDP averages gradients over ranks, so the mean of per-rank means is what it trains. When ranks hold different
    numbers of items (masked tokens of an MLM term), that is not the mean over all items; multiplying each rank's
    mean by ``local_count · world_size / global_count`` makes DDP's average exactly the global mean. Without
    ``gather_across_devices`` or a process group of two or more ranks, 1. ``device`` is where the loss lives, which
    is where the backend (NCCL on GPUs) needs the count. A count still on the GPU (a tensor) is read only when the
    ranks need it: a single process never waits for the GPU here.
    """
    if not (gather_across_devices and dist.is_available() and dist.is_initialized()) or dist.get_world_size() < 2:
        return 1.0
    count = torch.as_tensor(local_count, device=device).to(torch.float64).reshape(1)
    total = count.clone()
    dist.all_reduce(total)
    if total.item() == 0:
        return 1.0
    return float(count.item() * dist.get_world_size() / total.item())


def supcon(
    similarities: torch.Tensor,
    positive_mask: torch.Tensor,
    candidate_mask: torch.Tensor,
    temperature: float,
    *,
    gather_across_devices: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean over anchors of ``−1/|P(i)| Σ_{p∈P(i)} log(exp(s_ip/τ) / Σ_{a∈A(i)} exp(s_ia/τ))``.

    ``positive_mask[i, j]`` marks the positives ``P(i)`` of anchor ``i``; ``candidate_mask[i, j]`` the items
    ``A(i)`` in its denominator (positives and negatives; never the anchor itself). Anchors without a positive
    drop out; returns the loss and how many anchors dropped out (a tensor: reading it waits for the GPU, so only a
    caller that reports it does). With no anchor left the loss is a zero that keeps the graph (never NaN). With
    ``gather_across_devices`` (candidates from every rank) the mean is weighted by this rank's share of the anchors
    that kept a positive (:func:`global_mean_factor`): ranks hold different numbers of them (a label alone in the
    global batch, a short last batch), and DDP's average of per-rank means is then the mean over the global batch.
    """
    positive_mask = positive_mask & candidate_mask
    with torch.autocast(similarities.device.type, enabled=False):  # the softmax in float32, whatever the AMP policy
        # The lowest float rather than -inf: an anchor with no candidate at all (a batch of one) then has finite
        # log-probabilities and a zero gradient, not NaN; for every other anchor exp() of it is exactly 0, as of -inf.
        logits = (similarities.float() / temperature).masked_fill(~candidate_mask, torch.finfo(torch.float32).min)
        log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    num_positives = positive_mask.sum(dim=1)
    kept = (num_positives > 0).sum()
    share = global_mean_factor(kept, similarities.device, gather_across_devices=gather_across_devices)
    # Sums over masks rather than selecting the anchors that have a positive: nothing here waits for the GPU.
    per_anchor = log_prob.masked_fill(~positive_mask, 0.0).sum(dim=1) / num_positives.clamp(min=1)
    return -per_anchor.sum() / kept.clamp(min=1) * share, len(num_positives) - kept
