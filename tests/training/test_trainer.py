"""ContrastiveTrainer (st_contrastive/training/trainer.py) training DeCLUTR: loss falls, checkpoints with the loss's
head, exact resume (inside sentence-transformers' loss modifiers too), clipping, a fixed evaluation objective, the
model checked before the first step, training after short documents were skipped, and DDP sync of the head."""

import json
import warnings

import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import AdaptiveLayerLoss, MatryoshkaLoss
from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments
from transformers import RobertaConfig, RobertaForMaskedLM

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_corpus, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file
from st_contrastive.losses import DeCLUTRLoss
from st_contrastive.training import LOSS_STATE_NAME, ContrastiveTrainer
from st_contrastive.training.trainer import average_gradients_across_ranks, optimized_parameters


def make_trainer(
    model, output_dir, max_steps, save_steps=None, learning_rate=1e-3, max_grad_norm=1.0, optim="adamw_torch"
):
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=48)
    documents = load_documents(data_file("corpus/docs.jsonl.gz"), limit=16)
    dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir),
        per_device_train_batch_size=4,
        max_steps=max_steps,
        learning_rate=learning_rate,
        warmup_ratio=0.0,
        max_grad_norm=max_grad_norm,
        optim=optim,
        logging_steps=1,
        save_steps=save_steps or max_steps,
        report_to="none",
        seed=0,
        disable_tqdm=True,
    )
    return ContrastiveTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        loss=DeCLUTRLoss(model),
        data_collator=DeCLUTRDataCollator(model.tokenizer, sampler, seed=0),
    )


def head_state(trainer):
    return {k: v.clone() for k, v in trainer.loss_state_dict()["loss"].items()}


def test_loss_falls_and_the_checkpoint_reloads_in_vanilla_sentence_transformers(tmp_path, tiny_model):
    trainer = make_trainer(tiny_model, tmp_path / "run", max_steps=24)
    trainer.train()
    history = [h for h in trainer.state.log_history if "loss" in h]
    assert {"contrastive", "mlm"} <= set(history[0])
    first = sum(h["loss"] for h in history[:4]) / 4
    last = sum(h["loss"] for h in history[-4:]) / 4
    assert last < first - 0.5, (first, last)

    tiny_model.save(str(tmp_path / "final"))
    modules = json.loads((tmp_path / "final" / "modules.json").read_text())
    assert [m["type"] for m in modules] == [
        "sentence_transformers.base.modules.transformer.Transformer",
        "sentence_transformers.sentence_transformer.modules.pooling.Pooling",
    ]
    reloaded = SentenceTransformer(str(tmp_path / "final"), device="cpu")
    sentences = ["A man is playing a guitar.", "The history of the city begins in 1850."]
    assert torch.allclose(
        torch.tensor(tiny_model.encode(sentences)), torch.tensor(reloaded.encode(sentences)), atol=1e-6
    )


def test_checkpoints_hold_the_head_and_resume_restores_it(tmp_path, tiny_model, tiny_mlm_dir):
    trainer = make_trainer(tiny_model, tmp_path / "run", max_steps=4, save_steps=2)
    trainer.train()
    checkpoint = tmp_path / "run" / "checkpoint-4"
    saved = torch.load(checkpoint / LOSS_STATE_NAME, weights_only=True)["loss"]
    assert "mlm_head.masked_lm.cls.predictions.transform.dense.weight" in saved
    assert not any(key.startswith("model.") for key in saved), "the model's own weights live in the checkpoint"
    assert all(torch.equal(saved[k], v) for k, v in head_state(trainer).items())

    # A fresh model and head, resumed from the checkpoint, get the trained head back.
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    transformer = Transformer(tiny_mlm_dir, max_seq_length=128)
    fresh = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean")], device="cpu")
    resumed = make_trainer(fresh, tmp_path / "run", max_steps=4, save_steps=2)
    assert not torch.equal(
        head_state(resumed)["mlm_head.masked_lm.cls.predictions.bias"], saved["mlm_head.masked_lm.cls.predictions.bias"]
    )
    resumed.train(resume_from_checkpoint=str(checkpoint))
    assert all(torch.equal(saved[k], v) for k, v in head_state(resumed).items())


def test_best_model_brings_its_head_once_and_never_without_the_model(tmp_path, tiny_model):
    trainer = make_trainer(tiny_model, tmp_path / "run", max_steps=2, save_steps=2)
    trainer.train()
    checkpoint = tmp_path / "run" / "checkpoint-2"
    saved = head_state(trainer)
    loads = []
    original = trainer.load_loss_state
    trainer.load_loss_state = lambda path: (loads.append(path), original(path))
    for p in trainer.loss_parameters():
        p.data.zero_()
    trainer.state.best_model_checkpoint = str(checkpoint)
    trainer._load_best_model()
    assert loads == [str(checkpoint)]
    assert all(torch.equal(saved[k], v) for k, v in head_state(trainer).items())
    for p in trainer.loss_parameters():
        p.data.zero_()
    (checkpoint / "model.safetensors").unlink()  # the encoder cannot be loaded: neither may its head
    trainer._load_best_model()
    assert len(loads) == 1 and all(not p.any() for p in trainer.loss_parameters())


def test_clipping_covers_the_loss_parameters(tmp_path, tiny_model):
    trainer = make_trainer(tiny_model, tmp_path / "run", max_steps=1, max_grad_norm=1.0)
    head_params = trainer.loss_parameters()
    assert head_params and not any(p is tiny_model[0].auto_model.get_input_embeddings().weight for p in head_params)
    for p in tiny_model.parameters():
        p.grad = torch.zeros_like(p)
    for p in head_params:
        p.grad = torch.full_like(p, 10.0)
    norm = trainer._clip_grad_norm(trainer.model)
    assert norm > 100
    clipped = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in head_params]))
    assert clipped.item() == pytest.approx(1.0, rel=1e-3)


def test_clipping_bounds_a_real_step_of_model_and_head_together(tmp_path, tiny_model):
    # Plain SGD moves every parameter by lr × its clipped gradient: the step's norm over encoder and head is the
    # clipping norm, which it can only be if the head's gradients were clipped with the model's.
    trainer = make_trainer(
        tiny_model, tmp_path / "run", max_steps=1, learning_rate=1.0, max_grad_norm=0.01, optim="sgd"
    )
    params = {id(p): p for p in [*tiny_model.parameters(), *trainer.loss_parameters()]}.values()
    before = [p.detach().clone() for p in params]
    trainer.train()
    step = torch.linalg.vector_norm(torch.stack([(p.detach() - b).norm() for p, b in zip(params, before)]))
    assert step.item() == pytest.approx(0.01, rel=1e-3)
    assert trainer.state.log_history[0]["grad_norm"] > 1.0  # the unclipped norm: clipping did cut the step


def test_an_optimizer_built_by_hand_gets_each_parameter_once(tiny_model):
    """A loss holds the model, so model + loss parameters list the encoder twice: AdamW warns and steps it twice."""
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    declutr, mnrl = DeCLUTRLoss(tiny_model), MultipleNegativesRankingLoss(tiny_model)
    with pytest.warns(UserWarning, match="duplicate parameters"):  # what the benchmarks did
        torch.optim.AdamW(list(tiny_model.parameters()) + list(declutr.parameters()), lr=1e-6)
    params = optimized_parameters(tiny_model, [declutr, mnrl])
    assert len({id(p) for p in params}) == len(params)
    everything = {id(p) for module in (tiny_model, declutr, mnrl) for p in module.parameters()}
    assert {id(p) for p in params} == everything and len(everything) > len(list(tiny_model.parameters()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.optim.AdamW(params, lr=1e-6)


def documents(model, sampler, limit=12):
    return prepare_declutr_dataset(
        load_documents(data_file("corpus/docs.jsonl.gz"), limit=limit), model.tokenizer, sampler
    )


def trainer_for(model, sampler, output_dir, max_steps=4, save_steps=None, resume=False, modifier=None, **loss_options):
    """``modifier(model, loss)``: the loss inside one of sentence-transformers' loss modifiers."""
    dataset = documents(model, sampler)
    loss = DeCLUTRLoss(model, **loss_options)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(output_dir),
        per_device_train_batch_size=3,
        max_steps=max_steps,
        learning_rate=1e-3,
        warmup_steps=0.0,
        logging_steps=1,
        save_steps=save_steps or max_steps,
        report_to="none",
        seed=0,
        disable_tqdm=True,
        eval_strategy="no",
    )
    return ContrastiveTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        eval_dataset=dataset.select(range(3)),
        loss=modifier(model, loss) if modifier else loss,
        data_collator=DeCLUTRDataCollator(model.tokenizer, sampler, seed=0),
    )


@pytest.fixture()
def tiny_roberta(tmp_path, tiny_mlm_dir):
    """A RoBERTa-family model: 66 position embeddings numbered from padding_idx + 1 = 1, so 65 usable."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny_mlm_dir)
    torch.manual_seed(0)
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=66,
        pad_token_id=tokenizer.pad_token_id,
    )
    RobertaForMaskedLM(config).save_pretrained(tmp_path / "roberta")
    tokenizer.save_pretrained(tmp_path / "roberta")
    transformer = Transformer(str(tmp_path / "roberta"), max_seq_length=128)
    return SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean")], device="cpu")


def test_roberta_positions_limit_spans_at_set_up(tmp_path, tiny_roberta):
    # 64 tokens + [CLS] and [SEP] need position 66, which does not exist: stopped before the first step.
    too_long = SpanSampler(num_anchors=1, num_positives=1, min_length=64, max_length=64)
    with pytest.raises(
        ValueError,
        match=r"at most 65 tokens \(66 position embeddings, numbered from 1\): lower the "
        r"span sampler's max_length=64 to 63 or less",
    ):
        trainer_for(tiny_roberta, too_long, tmp_path / "too-long")
    longest = SpanSampler(num_anchors=1, num_positives=1, min_length=63, max_length=63)
    trainer = trainer_for(tiny_roberta, longest, tmp_path / "fits", max_steps=2)
    trainer.train()  # every span is as long as the model allows
    assert trainer.state.global_step == 2


@pytest.mark.parametrize(
    "ablation", [{"contrastive_weight": 0.0}, {"mlm_weight": 0.0}, {}], ids=["mlm", "nt-xent", "both"]
)
def test_evaluation_loss_is_the_training_objective_and_fixed(tmp_path, tiny_model, ablation):
    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=48)
    trainer = trainer_for(tiny_model, sampler, tmp_path / "run", max_steps=1, **ablation)
    first, second = trainer.evaluate()["eval_loss"], trainer.evaluate()["eval_loss"]
    assert first == second and first > 0
    trainer.train()  # moves the training epoch and weights; evaluation spans and masks stay put
    trainer.model.load_state_dict(trainer.model.state_dict())
    assert trainer.get_eval_dataloader().collate_fn.evaluation


MODIFIERS = {
    "alone": None,
    "matryoshka": lambda model, loss: MatryoshkaLoss(model, loss, [32, 16]),
    # One earlier layer drawn per step with Python's random: the checkpoint's RNG state must bring the same draws back.
    "adaptive-layer": lambda model, loss: AdaptiveLayerLoss(model, loss, n_layers_per_step=1),
}


@pytest.mark.parametrize("modifier", list(MODIFIERS))
def test_resume_continues_exactly_as_the_uninterrupted_run(tmp_path, tiny_mlm_dir, modifier):
    modifier = MODIFIERS[modifier]

    def fresh_model():
        torch.manual_seed(0)
        transformer = Transformer(tiny_mlm_dir, max_seq_length=128)
        return SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean")], device="cpu")

    sampler = SpanSampler(num_anchors=2, num_positives=2, min_length=8, max_length=48)
    straight = trainer_for(fresh_model(), sampler, tmp_path / "straight", max_steps=6, modifier=modifier)
    straight.train()
    interrupted = trainer_for(
        fresh_model(), sampler, tmp_path / "interrupted", max_steps=6, save_steps=3, modifier=modifier
    )
    interrupted.train()  # writes checkpoint-3 on the way
    resumed = trainer_for(fresh_model(), sampler, tmp_path / "resumed", max_steps=6, modifier=modifier)
    resumed.train(resume_from_checkpoint=str(tmp_path / "interrupted" / "checkpoint-3"))
    for key, value in straight.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[key], value), key
    for key, value in straight.loss_state_dict()["loss"].items():
        assert torch.equal(resumed.loss_state_dict()["loss"][key], value), key


# Documents too short for the spans: 3 anchors of up to 254 tokens need 1,524 tokens, which some of the first 12
# shared articles lack; the kept rows are a selection with a gap (tests/commands/test_declutr.py runs the command).
def test_the_python_api_trains_after_a_skip(tmp_path, tiny_mlm_dir):
    """The README's "DeCLUTR in Python", shrunk: ContrastiveTrainer on the documents a SpanSampler kept."""
    torch.manual_seed(0)
    transformer = Transformer(tiny_mlm_dir, max_seq_length=256)
    model = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean")], device="cpu")
    sampler = SpanSampler(num_anchors=3, num_positives=2, min_length=32, max_length=254, short_documents="skip")
    documents = load_corpus("wiki", limit=12)
    train_dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
    assert 2 <= len(train_dataset) < 12
    trainer = ContrastiveTrainer(  # built the model card's examples from the dataset: the crash was here
        model=model,
        args=SentenceTransformerTrainingArguments(
            output_dir=str(tmp_path / "ckpt"),
            per_device_train_batch_size=2,
            max_steps=2,
            learning_rate=5e-5,
            weight_decay=0.1,
            warmup_steps=0.1,
            report_to="none",
            disable_tqdm=True,
            use_cpu=True,
        ),
        train_dataset=train_dataset,
        loss=DeCLUTRLoss(model, temperature=0.05),
        data_collator=DeCLUTRDataCollator(model.tokenizer, sampler),
    )
    before = model.encode(["A man is playing a guitar."])
    trainer.train()
    assert trainer.state.global_step == 2
    model.save(str(tmp_path / "my-declutr"))
    reloaded = SentenceTransformer(str(tmp_path / "my-declutr"), device="cpu")
    after = reloaded.encode(["A man is playing a guitar."])
    assert not torch.allclose(torch.tensor(before), torch.tensor(after))


def _average_gradients_on_this_rank(rank: int) -> list[list[float]]:
    params = [torch.nn.Parameter(torch.zeros(3)), torch.nn.Parameter(torch.zeros(2))]
    params[0].grad = torch.full((3,), float(rank + 1))
    if rank == 0:
        params[1].grad = torch.ones(2)  # rank 1 has no gradient for this one
    average_gradients_across_ranks(params)
    return [p.grad.tolist() for p in params]


def _train_on_this_rank(model_dir: str, output_dir: str, sync_heads: bool) -> dict:
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    average = ContrastiveTrainer._average_loss_gradients
    if not sync_heads:  # the control: what sentence-transformers alone does with a loss-owned head
        ContrastiveTrainer._average_loss_gradients = lambda self: None
    try:
        torch.manual_seed(0)
        model = SentenceTransformer(modules=[Transformer(model_dir, max_seq_length=64), Pooling(32)], device="cpu")
        sampler = SpanSampler(num_anchors=2, num_positives=1, min_length=8, max_length=32)
        dataset = prepare_declutr_dataset(
            load_documents(data_file("corpus/docs.jsonl.gz"), limit=12), model.tokenizer, sampler
        )
        args = SentenceTransformerTrainingArguments(
            output_dir=output_dir,
            per_device_train_batch_size=2,
            max_steps=3,
            learning_rate=1e-2,
            report_to="none",
            seed=0,
            disable_tqdm=True,
            ddp_backend="gloo",
            save_strategy="no",
            use_cpu=True,
        )
        trainer = ContrastiveTrainer(
            model=model,
            args=args,
            train_dataset=dataset,
            loss=DeCLUTRLoss(model, gather_across_devices=True),
            data_collator=DeCLUTRDataCollator(model.tokenizer, sampler),
        )
        trainer.train()
    finally:
        ContrastiveTrainer._average_loss_gradients = average
    return {
        "world": trainer.args.world_size,
        "head": trainer.loss_state_dict()["loss"],
        "model": {k: v.clone() for k, v in model.state_dict().items()},
    }


def _ddp_checks_on_rank(rank, model_dir, output_dir):
    """Every DDP check of this file, on one rank of the session's pair (conftest's ``two_ranks``)."""
    return {
        "average": _average_gradients_on_this_rank(rank),
        **{
            sync_heads: _train_on_this_rank(model_dir, f"{output_dir}/{sync_heads}", sync_heads)
            for sync_heads in (True, False)
        },
    }


@pytest.fixture(scope="module")
def ddp_runs(tmp_path_factory, tiny_mlm_dir, two_ranks) -> dict:
    ranks = two_ranks.run(_ddp_checks_on_rank, tiny_mlm_dir, str(tmp_path_factory.mktemp("ddp")))
    return {(key, rank): value for rank, checks in enumerate(ranks) for key, value in checks.items()}


@pytest.mark.distributed
def test_loss_gradients_are_averaged_across_ranks(ddp_runs):
    assert ddp_runs[("average", 0)] == ddp_runs[("average", 1)] == [[1.5, 1.5, 1.5], [0.5, 0.5]]


@pytest.mark.distributed
@pytest.mark.parametrize("sync_heads", [True, False], ids=["contrastive-trainer", "without-head-sync"])
def test_two_ddp_ranks_keep_the_mlm_head_identical_through_the_trainer(ddp_runs, sync_heads):
    first, second = ddp_runs[(sync_heads, 0)], ddp_runs[(sync_heads, 1)]
    assert first["world"] == second["world"] == 2
    heads_equal = all(torch.equal(first["head"][k], second["head"][k]) for k in first["head"])
    models_equal = all(torch.equal(first["model"][k], second["model"][k]) for k in first["model"])
    assert heads_equal == sync_heads
    # Unsynced heads also pull the encoders apart: each rank clips with the norm of its own head's gradients.
    assert models_equal == sync_heads
