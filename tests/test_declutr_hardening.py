"""DeCLUTR as a reviewer tries it: the paper's RoBERTa positions, evaluation of every ablation, exact resume,
randomness that does not depend on workers, and bad input caught before training."""

import pytest
import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.losses import AdaptiveLayerLoss, MatryoshkaLoss
from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments
from torch.utils.data import DataLoader
from transformers import RobertaConfig, RobertaForMaskedLM

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_documents, prepare_declutr_dataset
from st_contrastive.data_dir import data_file
from st_contrastive.losses import DeCLUTRLoss
from st_contrastive.training import ContrastiveTrainer


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
        r"span sampler's max_length \(--max-span-length\) to 63 or less",
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


def test_spans_do_not_depend_on_workers_and_persistent_workers_see_the_epoch(tiny_model):
    sampler = SpanSampler(num_anchors=2, num_positives=1, min_length=8, max_length=48)
    dataset = documents(tiny_model, sampler, limit=8)
    collator = DeCLUTRDataCollator(tiny_model.tokenizer, sampler, seed=0)

    def epoch_batches(loader):
        return [batch["anchor_input_ids"] for batch in loader]

    in_process = DataLoader(dataset, batch_size=2, collate_fn=collator)
    workers = DataLoader(dataset, batch_size=2, collate_fn=collator, num_workers=2, persistent_workers=True)
    epoch0 = epoch_batches(in_process)
    assert all(torch.equal(a, b) for a, b in zip(epoch0, epoch_batches(workers)))
    collator.set_epoch(1)
    epoch1 = epoch_batches(in_process)
    assert all(torch.equal(a, b) for a, b in zip(epoch1, epoch_batches(workers)))
    assert not any(a.shape == b.shape and torch.equal(a, b) for a, b in zip(epoch0, epoch1))


def test_bad_corpus_and_tokenizer_are_named(tmp_path, tiny_model):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty.jsonl: no documents in the file"):
        load_documents(empty)
    tiny_model.tokenizer.pad_token = None
    with pytest.raises(ValueError, match="has no pad token"):
        DeCLUTRDataCollator(tiny_model.tokenizer)
