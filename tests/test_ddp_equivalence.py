"""Two DDP ranks (gloo, CPU) with B/2 rows each train exactly what one process with B rows trains, through the
real trainer: the same logged losses and the same parameters after several steps, for DeCLUTR (NT-Xent + MLM)
and SupCon + CE on NLI, with the loss-owned heads identical on both ranks."""

from __future__ import annotations

import socket

import pytest
import torch
import torch.multiprocessing as mp

GLOBAL_BATCH = {"declutr": 4, "nli": 12}  # documents; NLI rows (SNLI premises come in groups of 3)
STEPS = 3
# Float32 sums taken in another order (two ranks, all-reduce) differ in the last bits; this bounds their drift.
TOLERANCE = {"atol": 2e-5, "rtol": 1e-4}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _setup(objective: str, model_dir: str):
    """Model (dropout off: ranks cannot share dropout draws), dataset, loss, collator and sampler of one run."""
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
    from st_contrastive.losses import DeCLUTRLoss, NLISupConLoss

    torch.manual_seed(0)
    model = SentenceTransformer(modules=[Transformer(model_dir, max_seq_length=64), Pooling(32)], device="cpu")
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    if objective == "declutr":
        sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=32)
        dataset = prepare_declutr_dataset(load_documents(data_file("corpus/docs.jsonl.gz"), limit=GLOBAL_BATCH["declutr"] * STEPS),
                                          model.tokenizer, sampler)
        loss = DeCLUTRLoss(model, gather_across_devices=True)
        return model, dataset, loss, DeCLUTRDataCollator(model.tokenizer, sampler), None
    dataset = load_nli("snli-dev", max_rows=GLOBAL_BATCH["nli"] * STEPS)
    loss = NLISupConLoss(model, supcon_weight=0.5, gather_across_devices=True)
    return model, dataset, loss, PremiseGroupDataCollator(model.preprocess), PremiseGroupBatchSampler


def _train(rank: int, world_size: int, port: int, objective: str, model_dir: str, output_dir: str, results) -> None:
    import os

    if world_size > 1:
        os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=str(port))
    os.environ["HF_HUB_OFFLINE"] = "1"
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    from st_contrastive.training import ContrastiveTrainer

    model, dataset, loss, collator, batch_sampler = _setup(objective, model_dir)
    before = {k: v.detach().clone() for k, v in model.state_dict().items()}
    extra = {"batch_sampler": batch_sampler} if batch_sampler else {}
    args = SentenceTransformerTrainingArguments(
        output_dir=output_dir, per_device_train_batch_size=GLOBAL_BATCH[objective] // world_size, max_steps=STEPS,
        learning_rate=1e-3, warmup_steps=0, logging_steps=1, report_to="none", seed=0, disable_tqdm=True,
        save_strategy="no", use_cpu=True, ddp_backend="gloo" if world_size > 1 else None, **extra,
    )
    trainer = ContrastiveTrainer(model=model, args=args, train_dataset=dataset, loss=loss, data_collator=collator)
    trainer.train()
    results[rank] = {
        "world": trainer.args.world_size,
        "losses": [row["loss"] for row in trainer.state.log_history if "loss" in row],
        "model": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "head": trainer.loss_state_dict()["loss"],
        "moved": max(float((v - before[k]).abs().max()) for k, v in model.state_dict().items()),
    }


def _run(world_size: int, objective: str, model_dir: str, output_dir: str) -> dict:
    results = mp.Manager().dict()
    mp.spawn(_train, args=(world_size, _free_port(), objective, model_dir, output_dir, results), nprocs=world_size,
             join=True)
    return dict(results)


def _tensors(state: dict) -> dict[str, torch.Tensor]:
    return {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}


@pytest.mark.parametrize("objective", ["declutr", "nli"])
def test_two_ranks_of_half_the_batch_train_what_one_process_trains(tmp_path, tiny_mlm_dir, objective):
    one = _run(1, objective, tiny_mlm_dir, str(tmp_path / "one"))[0]
    two = _run(2, objective, tiny_mlm_dir, str(tmp_path / "two"))
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
