"""The one cross-device gather, on a real 2-process gloo group with uneven batches: every contrastive loss gives
the loss and gradients of the whole batch in one process, also when ranks hold different numbers of anchors with
a positive (supcon weights each rank's mean by its share)."""

import pytest
import torch

from st_contrastive.losses import SCALeLoss, SupConLoss, nt_xent
from st_contrastive.losses.contrastive_core import gather_candidates, similarity_matrix, supcon
from st_contrastive.models import LabelClassifier

# Real process groups and launchers: in `make test`, left out of `make test-fast`.
pytestmark = pytest.mark.distributed

SIZES = (3, 2)  # rows per rank: uneven, like a last batch
DIM = 6


def _pairs(seed: int):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(sum(SIZES), DIM, generator=generator), torch.randn(sum(SIZES), DIM, generator=generator)


def _labels():
    return torch.tensor([0, 1, 0, 1, 1])


# Labels 0 and 2 are alone in the global batch, so those anchors have no positive: rank 0 keeps 1 of its 3 anchors,
# rank 1 both of its 2, and the mean of the ranks' means is not the mean over the batch unless weighted.
LONELY = torch.tensor([0, 1, 2, 1, 1])


def _label_losses(gather: bool) -> dict:
    """SupConLoss and SCALeLoss's SupCon term on plain embeddings (they read no model for these)."""
    supcon_loss = SupConLoss(torch.nn.Identity(), temperature=0.5, gather_across_devices=gather)
    scale = SCALeLoss(
        torch.nn.Identity(), classifier=LabelClassifier(DIM, 3), temperature=0.5, gather_across_devices=gather
    )
    return {"supcon": supcon_loss.compute_loss, "scale": scale.label_supcon}


def _label_supcon(embeddings, labels, gather):
    candidates = gather_candidates(embeddings, labels, gather_across_devices=gather)
    positives = labels[:, None] == candidates.labels[None, :]
    loss, _ = supcon(
        similarity_matrix(embeddings, candidates.embeddings),
        positives,
        candidates.not_self(len(embeddings)),
        0.5,
        gather_across_devices=gather,
    )
    return loss


def _on_rank(rank):
    start, end = sum(SIZES[:rank]), sum(SIZES[: rank + 1])
    anchors, positives = (t[start:end].clone().requires_grad_() for t in _pairs(0))
    # supcon weights each rank's mean by its share of the rows: DDP's average over ranks is the global mean.
    nt_xent(anchors, positives, 0.1, gather_across_devices=True).backward()
    embeddings = _pairs(1)[0][start:end].clone().requires_grad_()
    _label_supcon(embeddings, _labels()[start:end], gather=True).backward()
    weighted = {}
    for name, loss_of in _label_losses(gather=True).items():
        rows = _pairs(2)[0][start:end].clone().requires_grad_()
        loss = loss_of(rows, LONELY[start:end])
        loss.backward()
        weighted[name] = (loss.item(), rows.grad)
    ids = [torch.tensor([0, -1, 1]), torch.tensor([-1, 0])][rank]  # -1: "no id", as NLISupCon's non-entailed rows
    candidates = gather_candidates(torch.zeros(len(ids), 1), ids, gather_across_devices=True, local_ids=True)
    return {
        "anchor_grad": anchors.grad,
        "positive_grad": positives.grad,
        "embedding_grad": embeddings.grad,
        "offset": candidates.offset,
        "ids": candidates.labels.tolist(),
        "weighted": weighted,
    }


@pytest.fixture(scope="module")
def ranks(two_ranks):
    """What each rank of the session's pair (conftest's ``two_ranks``) computed, in rank order."""
    assert len(SIZES) == 2
    return two_ranks.run(_on_rank)


def test_offsets_and_local_ids_are_global(ranks):
    assert [ranks[r]["offset"] for r in range(2)] == [0, 3]
    # Rank 1's id 0 moves past rank 0's rows; "no id" stays -1.
    assert ranks[0]["ids"] == ranks[1]["ids"] == [0, -1, 1, -1, 3]


def test_nt_xent_gradients_equal_one_process_over_the_whole_batch(ranks):
    anchors, positives = (t.clone().requires_grad_() for t in _pairs(0))
    nt_xent(anchors, positives, 0.1).backward()
    # DDP averages the ranks' gradients: each rank's divided by the number of ranks.
    gathered = torch.cat([ranks[r]["anchor_grad"] for r in range(2)]) / len(SIZES)
    torch.testing.assert_close(gathered, anchors.grad, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(
        torch.cat([ranks[r]["positive_grad"] for r in range(2)]) / len(SIZES), positives.grad, atol=1e-5, rtol=1e-4
    )


def test_label_supcon_gradients_equal_one_process_over_the_whole_batch(ranks):
    embeddings = _pairs(1)[0].clone().requires_grad_()
    _label_supcon(embeddings, _labels(), gather=False).backward()
    torch.testing.assert_close(
        torch.cat([ranks[r]["embedding_grad"] for r in range(2)]) / len(SIZES), embeddings.grad, atol=1e-5, rtol=1e-4
    )


@pytest.mark.parametrize("loss_name", ["supcon", "scale"])
def test_ranks_with_unequal_anchors_train_the_mean_over_the_batch(ranks, loss_name):
    rows = _pairs(2)[0].clone().requires_grad_()
    loss = _label_losses(gather=False)[loss_name](rows, LONELY)
    loss.backward()
    # DDP averages over the ranks: the mean of their losses, and each rank's gradient divided by the world size.
    weighted = [ranks[r]["weighted"][loss_name] for r in range(2)]
    assert sum(value for value, _ in weighted) / 2 == pytest.approx(loss.item(), rel=1e-5)
    torch.testing.assert_close(torch.cat([grad for _, grad in weighted]) / 2, rows.grad, atol=1e-6, rtol=1e-4)
    # Unweighted, the ranks' mean would miss: rank 0 has one anchor with a positive, rank 1 two.
    assert abs(sum(value / factor for (value, _), factor in zip(weighted, (2 / 3, 4 / 3))) / 2 - loss.item()) > 1e-3
