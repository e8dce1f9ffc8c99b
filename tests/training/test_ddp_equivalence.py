"""Two DDP ranks (gloo, CPU) with B/2 rows each train exactly what one process with B rows trains, through the
real trainer: the same logged losses and the same parameters after several steps, for DeCLUTR (NT-Xent + MLM),
SupCon + CE on NLI and the multi-view context loss, with the loss-owned heads (MLM head, classifier, bilinear W)
identical on both ranks; two ranks running GradCache (the cached DeCLUTR and NLI losses) train what one process
trains with the plain loss; and DeCLUTR inside MatryoshkaLoss trains on two ranks what it trains in one process."""

from __future__ import annotations

import os

import pytest
import torch

# Real process groups and launchers: in `make test`, left out of `make test-fast`.
pytestmark = pytest.mark.distributed

# Documents; NLI rows (SNLI premises come in groups of 3); consecutive sentences (two blocks of 8).
GLOBAL_BATCH = {
    "declutr": 4,
    "nli": 12,
    "multiview": 16,
    "declutr-cached": 4,
    "nli-cached": 12,
    "declutr-matryoshka": 4,
}
OBJECTIVES = list(GLOBAL_BATCH)
STEPS = 3
# Float32 sums taken in another order (two ranks, all-reduce) differ in the last bits; this bounds their drift.
TOLERANCE = {"atol": 2e-5, "rtol": 1e-4}


def _two_blocks_per_batch():
    """The single process's batches for the multi-view run: under DDP accelerate deals the blocks of consecutive
    sentences to the ranks in turn (rank 0 block 2k, rank 1 block 2k+1), so one process with twice the batch takes
    the same two blocks together. Sentence positions are the labels, so contexts are the same either way."""
    from st_contrastive.data import ContextBlockBatchSampler

    class TwoBlocksPerBatch(ContextBlockBatchSampler):
        def __init__(self, dataset, batch_size, **kwargs):
            super().__init__(dataset, batch_size // 2, **kwargs)

        def __iter__(self):
            blocks = list(super().__iter__())
            for first, second in zip(blocks[::2], blocks[1::2]):
                yield first + second

        def __len__(self):
            return super().__len__() // 2

    return TwoBlocksPerBatch


def _multiview_setup(parsed: str, world_size: int):
    from st_contrastive.data import ContextBlockBatchSampler, load_sentence_corpus
    from st_contrastive.losses import MultiViewBilinearLoss
    from st_contrastive.models import multiview_model

    dataset, sentences = load_sentence_corpus(parsed)
    torch.manual_seed(0)
    model = multiview_model(["dep", "seq"], sentences, parser=None, word_dim=16, dim=12)
    model[0].add_parses(sentences)
    loss = MultiViewBilinearLoss(model, gather_across_devices=True)
    # Each rank draws a bilinear W of its own: the trainer must start both from rank 0's (seed 1, as one process).
    torch.manual_seed(int(os.environ.get("RANK", "0")) + 1)
    torch.nn.init.xavier_uniform_(loss.bilinear, gain=100.0)  # scores far from 0: a loss away from log(15)
    sampler = ContextBlockBatchSampler if world_size > 1 else _two_blocks_per_batch()
    return model, dataset, loss, None, sampler


def _setup(objective: str, source: str, world_size: int):
    """Model (dropout off: ranks cannot share dropout draws), dataset, loss, collator and sampler of one run;
    ``source`` is the tiny BERT's folder, or the parsed corpus of the multi-view run."""
    if objective == "multiview":
        return _multiview_setup(source, world_size)
    model_dir = source
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    from st_contrastive.data import (
        DeCLUTRDataCollator,
        PremiseGroupBatchSampler,
        PremiseGroupDataCollator,
        SpanSampler,
        load_documents,
        load_nli,
        prepare_declutr_dataset,
    )
    from st_contrastive.data_dir import data_file
    from st_contrastive.losses import CachedDeCLUTRLoss, CachedNLISupConLoss, DeCLUTRLoss, NLISupConLoss

    # "-cached": the two ranks run GradCache (2 spans / rows at a time) against the plain loss in one process.
    cached = {"mini_batch_size": 2} if objective.endswith("-cached") and world_size > 1 else None
    # "-matryoshka": the loss inside sentence-transformers' MatryoshkaLoss (the full 32 dimensions and 16).
    matryoshka = objective.endswith("-matryoshka")
    objective = objective.removesuffix("-cached").removesuffix("-matryoshka")
    torch.manual_seed(0)
    model = SentenceTransformer(modules=[Transformer(model_dir, max_seq_length=64), Pooling(32)], device="cpu")
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    if objective == "declutr":
        sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=32)
        dataset = prepare_declutr_dataset(
            load_documents(data_file("corpus/docs.jsonl.gz"), limit=GLOBAL_BATCH["declutr"] * STEPS),
            model.tokenizer,
            sampler,
        )
        loss = (
            CachedDeCLUTRLoss(model, gather_across_devices=True, **cached)
            if cached
            else DeCLUTRLoss(model, gather_across_devices=True)
        )
        if matryoshka:
            from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

            loss = MatryoshkaLoss(model, loss, [32, 16])
        return model, dataset, loss, DeCLUTRDataCollator(model.tokenizer, sampler), None
    dataset = load_nli("snli-dev", max_rows=GLOBAL_BATCH["nli"] * STEPS)
    loss = (
        CachedNLISupConLoss(model, supcon_weight=0.5, gather_across_devices=True, **cached)
        if cached
        else NLISupConLoss(model, supcon_weight=0.5, gather_across_devices=True)
    )
    return model, dataset, loss, PremiseGroupDataCollator(model.preprocess), PremiseGroupBatchSampler


def _train(objective: str, source: str, world_size: int, output_dir: str) -> dict:
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    from st_contrastive.training import ContrastiveTrainer

    model, dataset, loss, collator, batch_sampler = _setup(objective, source, world_size)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    extra = {"batch_sampler": batch_sampler} if batch_sampler else {}
    args = SentenceTransformerTrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=GLOBAL_BATCH[objective] // world_size,
        max_steps=STEPS,
        learning_rate=1e-3,
        warmup_steps=0,
        logging_steps=1,
        report_to="none",
        seed=0,
        disable_tqdm=True,
        save_strategy="no",
        use_cpu=True,
        ddp_backend="gloo" if world_size > 1 else None,
        dataloader_drop_last=True,  # what sentence-transformers sets under DDP anyway: the same batches in both runs
        **extra,
    )
    trainer = ContrastiveTrainer(model=model, args=args, train_dataset=dataset, loss=loss, data_collator=collator)
    trainer.train()
    return {
        "world": trainer.args.world_size,
        "losses": [row["loss"] for row in trainer.state.log_history if "loss" in row],
        "model": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "head": trainer.loss_state_dict()["loss"],
        "moved": max(float((v - before[k]).abs().max()) for k, v in model.state_dict().items()),
    }


def _train_every_objective(rank: int, sources: dict, output_dir: str) -> dict:
    """Every objective in turn, on one rank of the session's pair (conftest's ``two_ranks``)."""
    return {
        objective: _train(objective, sources[objective], 2, f"{output_dir}/{objective}") for objective in OBJECTIVES
    }


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_mlm_dir, parsed_books, two_ranks) -> dict:
    """Every objective trained by one process with the global batch (this one), and by two ranks with half of it
    each."""
    sources = {objective: parsed_books if objective == "multiview" else tiny_mlm_dir for objective in OBJECTIVES}
    one = tmp_path_factory.mktemp("world-1")
    runs = {(objective, 0): _train(objective, sources[objective], 1, str(one / objective)) for objective in OBJECTIVES}
    ranks = two_ranks.run(_train_every_objective, sources, str(tmp_path_factory.mktemp("world-2")))
    return {1: runs, 2: {(objective, rank): ranks[rank][objective] for rank in (0, 1) for objective in OBJECTIVES}}


def _tensors(state: dict) -> dict[str, torch.Tensor]:
    return {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_two_ranks_of_half_the_batch_train_what_one_process_trains(runs, objective):
    one, two = runs[1][(objective, 0)], {rank: runs[2][(objective, rank)] for rank in (0, 1)}
    assert one["world"] == 1 and two[0]["world"] == two[1]["world"] == 2
    assert len(one["losses"]) == STEPS
    for rank in (0, 1):
        # The trainer logs the mean over ranks, which gather_across_devices makes the loss of the global batch.
        torch.testing.assert_close(torch.tensor(two[rank]["losses"]), torch.tensor(one["losses"]), **TOLERANCE)
        for name, value in one["model"].items():
            torch.testing.assert_close(two[rank]["model"][name], value, **TOLERANCE, msg=f"encoder {name}")
        for name, value in _tensors(one["head"]).items():
            torch.testing.assert_close(two[rank]["head"][name], value, **TOLERANCE, msg=f"head {name}")
    # Loss-owned heads are not only close to the single process's: they are bit-identical across ranks.
    assert all(torch.equal(two[0]["head"][k], two[1]["head"][k]) for k in _tensors(two[0]["head"]))
    # Training moved the weights far beyond the tolerance, so this is not the equality of two untrained models.
    assert one["moved"] > 100 * TOLERANCE["atol"]
