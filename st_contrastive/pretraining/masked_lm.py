"""Pretrain a small BERT with masked language modelling: the MLM-pretrained base DeCLUTR starts from.

No MLM-pretrained English encoder can be downloaded on every machine, and users with a new domain or language
need one of their own; this trains a WordPiece tokenizer and a small ``BertForMaskedLM`` on a document corpus.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from datasets import Dataset
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertTokenizerFast,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    set_seed,
)

from st_contrastive.data.masking import mask_tokens
from st_contrastive.pretraining.wordpiece import train_wordpiece_tokenizer
from st_contrastive.training.checkpoints import latest_complete_checkpoint
from st_contrastive.training.distributed import (
    agree_with_rank_zero,
    has_accelerator,
    is_main_process,
    main_process_first,
    world_size,
)
from st_contrastive.training.interrupt import StopOnInterrupt, TrainingInterrupted, stop_after_step_on_interrupt

logger = logging.getLogger(__name__)

def build_masked_lm(
    tokenizer: BertTokenizerFast,
    hidden_size: int = 256,
    num_layers: int = 4,
    num_heads: int = 4,
    intermediate_size: int | None = None,
    max_position_embeddings: int = 512,
    dropout: float = 0.1,
    model_class: type[BertForMaskedLM] = BertForMaskedLM,
) -> BertForMaskedLM:
    """A randomly initialised ``BertForMaskedLM`` sized for ``tokenizer`` (decoder tied to the input embeddings)."""
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        intermediate_size=intermediate_size or 4 * hidden_size,
        max_position_embeddings=max_position_embeddings,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return model_class(config)


class MaskedPositionsMLM(BertForMaskedLM):
    """A ``BertForMaskedLM`` whose training forward scores only the masked positions.

    ``BertForMaskedLM.forward`` projects every position onto the vocabulary although only ~15% carry a label; on a
    small model that projection is the largest matmul of the step (measured: 1.8x faster step on CPU without it).
    A subclass, not a wrapper, so the Trainer's checkpoints are ordinary ``save_pretrained`` folders (tied weights
    and all) that resume; ``as_masked_lm`` gives the plain ``BertForMaskedLM`` that is saved at the end.
    """

    def forward(self, input_ids, labels, attention_mask=None, token_type_ids=None, **kwargs) -> dict[str, torch.Tensor]:
        hidden = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)[0]
        masked = labels != -100
        logits = self.cls(hidden[masked])
        # float32 cross-entropy: under bf16 autocast the log-softmax over the vocabulary would lose precision.
        return {"loss": F.cross_entropy(logits.float(), labels[masked])}

    def as_masked_lm(self) -> BertForMaskedLM:
        plain = BertForMaskedLM(self.config)
        plain.load_state_dict(self.state_dict())
        return plain


# The held-out loss is always measured at BERT's 15 %, so runs that train at another rate stay comparable.
HELD_OUT_MLM_PROBABILITY = 0.15


class HeldOutLossLog(TrainerCallback):
    """Measure the held-out losses every ``every`` steps: the curve shows when the model leaves the unigram plateau.

    The measurements go into the trainer's ``log_history``, which every checkpoint saves (``trainer_state.json``)
    and a resume restores, so a resumed run keeps the curve measured before the interruption (:func:`held_out_log`).
    """

    def __init__(self, model, batches: list[dict], mask_token_id: int, every: int):
        self.model, self.batches, self.mask_token_id, self.every = model, batches, mask_token_id, every

    def on_step_end(self, args, state, control, **kwargs):
        # Called before the trainer saves this step's checkpoint, so the checkpoint holds this measurement too.
        if state.is_world_process_zero and state.global_step % self.every == 0:
            loss, mask_loss = held_out_mlm_losses(self.model, self.batches, self.mask_token_id)
            state.log_history.append({"step": state.global_step, "held_out_loss": loss,
                                      "held_out_mask_token_loss": mask_loss})
            logger.info("step %d: held-out MLM loss %.3f, [MASK]-token loss %.3f", state.global_step, loss, mask_loss)


def held_out_log(log_history: list[dict]) -> list[dict]:
    """The held-out losses :class:`HeldOutLossLog` measured, from the trainer's log (resumed runs included)."""
    return [{"step": entry["step"], "loss": entry["held_out_loss"], "mask_token_loss": entry["held_out_mask_token_loss"]}
            for entry in log_history if "held_out_loss" in entry]


class StopAfterMinutes(TrainerCallback):
    """Stop training once ``minutes`` of wall-clock have passed since training began. Under torchrun / accelerate
    rank 0's clock decides for every rank: a rank that stopped alone would leave the others waiting for it."""

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.start = None
        self.stopped = False

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        if agree_with_rank_zero(time.monotonic() - self.start >= self.seconds, args.device):
            control.should_training_stop = self.stopped = True


def pack_into_blocks(tokenized: Dataset, tokenizer: BertTokenizerFast, max_seq_length: int) -> Dataset:
    """Concatenate the token ids of consecutive documents and cut them into ``[CLS] ... [SEP]`` blocks.

    Packing wastes no compute on padding. Blocks may cross a document boundary, as in BERT's pretraining; the tail
    shorter than a block at the end of each map batch (1,000 documents) is dropped and counted by the caller.
    """
    body = max_seq_length - 2

    def pack(batch):
        ids = [token for document in batch["input_ids"] for token in document]
        blocks = [ids[i : i + body] for i in range(0, len(ids) - body + 1, body)]
        return {"input_ids": [[tokenizer.cls_token_id, *block, tokenizer.sep_token_id] for block in blocks]}

    return tokenized.map(pack, batched=True, batch_size=1000, remove_columns=tokenized.column_names, desc="Packing")


class BlockMaskingCollator:
    """BERT masking whose draws are a function of (seed, the batch's block numbers), not of a running generator.

    transformers' collator draws from one generator, so a run resumed from a checkpoint masks differently from the
    uninterrupted run (the skipped batches never draw). Keyed draws make a resumed run identical to it.
    """

    def __init__(self, tokenizer, mlm_probability: float, seed: int):
        self.tokenizer, self.mlm_probability, self.seed = tokenizer, mlm_probability, seed

    def __call__(self, features: list[dict]) -> dict[str, torch.Tensor]:
        input_ids = torch.tensor([feature["input_ids"] for feature in features])
        key = np.random.default_rng([self.seed, *(feature["block"] for feature in features)]).integers(2**63 - 1)
        masked, labels = mask_tokens(input_ids, self.tokenizer, self.mlm_probability, torch.Generator().manual_seed(int(key)))
        return {"input_ids": masked, "labels": labels}


def fixed_masked_batches(blocks: Dataset, collator: BlockMaskingCollator, batch_size: int) -> list[dict]:
    """Mask the held-out blocks once, so the loss before and after training is measured on identical inputs."""
    rows = blocks.select_columns(["input_ids", "block"]).to_list()
    return [collator(rows[i : i + batch_size]) for i in range(0, len(rows), batch_size)]


@torch.no_grad()
def held_out_mlm_losses(model: MaskedPositionsMLM, batches: list[dict], mask_token_id: int) -> tuple[float, float]:
    """Mean cross-entropy (float32, eval mode) over all labelled tokens, and over those shown as [MASK] only.

    The second is the honest measure of context use: on the 10% of labelled tokens left unchanged a model scores
    well by copying its input, which lowers the first number long before the model reads the context.
    """
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    losses, shown_as_mask = [], []
    for batch in batches:
        input_ids, labels = batch["input_ids"].to(device), batch["labels"].to(device)
        labelled = labels != -100
        hidden = model.bert(input_ids=input_ids)[0]
        logits = model.cls(hidden[labelled]).float()
        losses.append(F.cross_entropy(logits, labels[labelled], reduction="none"))
        shown_as_mask.append(input_ids[labelled] == mask_token_id)
    model.train(was_training)
    losses, shown_as_mask = torch.cat(losses), torch.cat(shown_as_mask)
    return float(losses.mean()), float(losses[shown_as_mask].mean())


def unigram_loss(blocks: Dataset, batches: list[dict], mask_token_id: int, vocab_size: int) -> float:
    """Loss on the held-out [MASK] tokens of predicting from corpus token frequencies alone.

    MLM training first plateaus at this value; a model is only useful once it is clearly below it.
    """
    counts = torch.ones(vocab_size)  # add-one smoothing
    for chunk in blocks.iter(batch_size=10_000):
        counts += torch.bincount(torch.tensor(chunk["input_ids"]).flatten(), minlength=vocab_size)
    log_probs = (counts / counts.sum()).log()
    targets = torch.cat([b["labels"][b["input_ids"] == mask_token_id] for b in batches])
    return float(-log_probs[targets].mean())


def pretrain_masked_lm(
    texts: Iterable[str] | Dataset,
    output_dir: str | Path,
    *,
    tokenizer: BertTokenizerFast | None = None,
    vocab_size: int = 8000,
    hidden_size: int = 256,
    num_layers: int = 4,
    num_heads: int = 4,
    max_seq_length: int = 128,
    batch_size: int = 32,
    learning_rate: float = 5e-4,
    warmup_ratio: float = 0.06,
    max_steps: int = 10_000,
    max_minutes: float | None = None,
    mlm_probability: float = 0.15,
    seed: int = 0,
    bf16: bool = False,
    dropout: float = 0.0,
    eval_blocks: int = 256,
    logging_steps: int | None = None,
    save_steps: int = 500,
    resume: bool = False,
) -> dict:
    """Pretrain a small ``BertForMaskedLM`` on ``texts`` and save it with its tokenizer at ``output_dir``.

    ``texts`` is an iterable of documents or a ``Dataset`` with a ``text`` column. A WordPiece tokenizer of
    ``vocab_size`` is trained on them unless ``tokenizer`` is given. Documents are tokenized once, packed into
    blocks of ``max_seq_length`` tokens, and up to ``eval_blocks`` random blocks (at most a tenth) are held out.
    Training uses the transformers ``Trainer``: BERT masking (``mlm_probability``; 80% [MASK], 10% random, 10%
    kept), AdamW, linear warm-up over ``warmup_ratio`` of ``max_steps`` then linear decay to zero.
    ``max_minutes`` stops training early after that much wall-clock (the schedule is still sized by ``max_steps``,
    so pick ``max_steps`` to fit and keep ``max_minutes`` as a guard). ``bf16`` trains under bfloat16 autocast
    (about 2x faster on CPUs with AVX512-BF16 and on recent GPUs; weights stay float32). ``dropout`` applies while
    pretraining only; the saved config has BERT's 0.1 for fine-tuning.

    Long runs are resumable: every ``save_steps`` a trainer checkpoint (weights, optimizer, scheduler, data order)
    goes to ``output_dir/checkpoints``, and the held-out losses are measured into the log. ``resume=True`` reuses
    the tokenizer saved at the start and continues from the last checkpoint, exactly as the uninterrupted run
    would; it refuses settings that differ from the interrupted run's. The held-out loss is always measured with
    15 % masking, whatever ``mlm_probability`` trains with.

    The checkpoint loads with ``AutoModelForMaskedLM.from_pretrained(output_dir)`` and as a sentence-transformers
    ``Transformer(output_dir)``. ``pretraining.json`` beside it records the settings, steps done, train loss,
    held-out MLM loss / perplexity before and after training, and the loss on held-out [MASK] tokens next to the
    unigram (token frequency) loss it must beat; the same dict is returned.
    """
    started = time.monotonic()
    output_dir = Path(output_dir)
    settings = {
        "vocab_size": vocab_size, "hidden_size": hidden_size, "num_layers": num_layers, "num_heads": num_heads,
        "max_seq_length": max_seq_length, "batch_size": batch_size, "learning_rate": learning_rate,
        "warmup_ratio": warmup_ratio, "max_steps": max_steps, "max_minutes": max_minutes,
        "mlm_probability": mlm_probability, "seed": seed, "bf16": bf16, "dropout": dropout,
        "eval_blocks": eval_blocks,
    }  # fmt: skip
    documents = texts if isinstance(texts, Dataset) else Dataset.from_dict({"text": list(texts)})
    documents = documents.select_columns(["text"])
    checkpoints = output_dir / "checkpoints"
    settings_file = output_dir / "pretraining_settings.json"
    # Under torchrun / accelerate rank 0 trains and saves the tokenizer; the other ranks then load that one.
    with main_process_first():
        if resume:
            tokenizer = resume_settings(settings_file, settings, len(documents))
        elif not is_main_process():
            tokenizer = BertTokenizerFast.from_pretrained(output_dir)
        else:
            if tokenizer is None:
                logger.info("Training a WordPiece tokenizer (vocab %d) on %d documents", vocab_size, len(documents))
                tokenizer = train_wordpiece_tokenizer(
                    (text for text in documents["text"]), vocab_size=vocab_size, model_max_length=max_seq_length
                )
            # Written before training, so an interrupted run can be resumed with the very same tokenizer.
            output_dir.mkdir(parents=True, exist_ok=True)
            tokenizer.save_pretrained(output_dir)
            settings_file.write_text(json.dumps({**settings, "vocab_size": len(tokenizer),
                                                 "documents": len(documents)}, indent=2) + "\n")
    settings["vocab_size"] = len(tokenizer)

    # Tokenize once; special tokens are added per block when packing.
    def tokenize(batch):
        # verbose=False: documents are longer than a block on purpose; they are cut when packing.
        ids = tokenizer(batch["text"], add_special_tokens=False, verbose=False)["input_ids"]
        return {"input_ids": ids, "length": [len(row) for row in ids]}

    tokenized = documents.map(tokenize, batched=True, remove_columns=["text"], desc="Tokenizing")
    n_tokens = sum(tokenized["length"])
    blocks = pack_into_blocks(tokenized, tokenizer, max_seq_length)
    blocks = blocks.add_column("block", list(range(len(blocks))))  # the masking key of BlockMaskingCollator
    n_eval = min(eval_blocks, len(blocks) // 10)
    if n_eval < 1:
        raise ValueError(
            f"Only {len(blocks)} blocks of {max_seq_length} tokens from {len(documents)} documents "
            f"({n_tokens} tokens): need at least 10 to hold some out. Pass more text or a smaller max_seq_length."
        )
    split = blocks.train_test_split(test_size=n_eval, seed=seed)
    data = {
        "documents": len(documents), "tokens": n_tokens, "blocks": len(blocks),
        "tokens_dropped_by_packing": n_tokens - len(blocks) * (max_seq_length - 2),
        "train_blocks": len(split["train"]), "held_out_blocks": n_eval,
    }  # fmt: skip
    logger.info("Corpus: %s", data)

    set_seed(seed)
    # Dropout defaults to off while pretraining: in under an epoch there is no overfitting to fight, and it slows
    # learning (Geiping & Goldstein 2022, "Cramming"). BERT's 0.1 is written to the saved config for fine-tuning.
    model = build_masked_lm(
        tokenizer, hidden_size, num_layers, num_heads, max_position_embeddings=max_seq_length, dropout=dropout,
        model_class=MaskedPositionsMLM,
    )
    collator = BlockMaskingCollator(tokenizer, mlm_probability, seed)
    held_out = fixed_masked_batches(
        split["test"], BlockMaskingCollator(tokenizer, HELD_OUT_MLM_PROBABILITY, seed + 1), batch_size
    )
    main_process = is_main_process()  # under torchrun / accelerate only rank 0 measures and reports
    if main_process:
        loss_before, mask_loss_before = held_out_mlm_losses(model, held_out, tokenizer.mask_token_id)
        loss_unigram = unigram_loss(split["train"], held_out, tokenizer.mask_token_id, len(tokenizer))

    args = TrainingArguments(
        output_dir=str(checkpoints),
        per_device_train_batch_size=batch_size,
        max_steps=max_steps,
        learning_rate=learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=warmup_ratio,  # transformers 5: a float below 1 is a fraction of max_steps
        weight_decay=0.01,
        optim="adamw_torch",
        bf16=bf16,
        # Said outright without a GPU: transformers refuses CPU bf16 otherwise, and accelerate would not join the
        # processes of a torchrun launch.
        use_cpu=not has_accelerator(),
        logging_steps=logging_steps or max(1, min(50, max_steps // 20)),
        remove_unused_columns=False,  # the collator needs the block numbers
        save_strategy="steps",
        save_steps=save_steps,
        save_total_limit=2,  # two: a run killed while writing one still has the one before
        report_to="none",
        seed=seed,
        dataloader_drop_last=True,
        dataloader_pin_memory=torch.cuda.is_available(),
        disable_tqdm=False,
    )
    stopper = StopAfterMinutes(max_minutes) if max_minutes is not None else None
    curve = HeldOutLossLog(model, held_out, tokenizer.mask_token_id, every=save_steps)
    interrupt = StopOnInterrupt()  # Ctrl-C: a checkpoint after the step in progress, then TrainingInterrupted
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=split["train"],
        data_collator=collator,
        callbacks=[curve, interrupt, *([stopper] if stopper else [])],
    )
    train_started = time.monotonic()
    # The last complete checkpoint: one torn by a kill while it was saved is skipped (with a warning).
    resume_from = latest_complete_checkpoint(checkpoints, report_torn=True) if resume and checkpoints.is_dir() else None
    if resume and not resume_from:
        logger.info("No complete checkpoint in %s yet: starting from step 0 with the saved tokenizer", checkpoints)
    with stop_after_step_on_interrupt(interrupt):
        try:
            train_output = trainer.train(resume_from_checkpoint=str(resume_from) if resume_from else None)
        except KeyboardInterrupt as error:  # a second Ctrl-C: the last checkpoint saved before is the resume point
            raise TrainingInterrupted(trainer.state.global_step, checkpoints) from error
    if interrupt.requested:
        raise TrainingInterrupted(trainer.state.global_step, checkpoints)
    train_seconds = time.monotonic() - train_started
    if not main_process:  # the other ranks of a torchrun/accelerate job: rank 0 measures and saves
        return {}
    loss_after, mask_loss_after = held_out_mlm_losses(model, held_out, tokenizer.mask_token_id)

    output_dir.mkdir(parents=True, exist_ok=True)
    mlm = model.as_masked_lm()
    mlm.config.hidden_dropout_prob = mlm.config.attention_probs_dropout_prob = 0.1
    mlm.save_pretrained(output_dir)  # the tokenizer is already there, saved before training
    logged = [(entry["step"], entry["loss"]) for entry in trainer.state.log_history if "loss" in entry]
    results = {
        "steps_done": trainer.state.global_step,
        "stopped_by_max_minutes": bool(stopper and stopper.stopped),
        "train_loss_mean": train_output.training_loss,
        "train_loss_first_logged": logged[0][1] if logged else None,
        "train_loss_last_logged": logged[-1][1] if logged else None,
        "held_out_loss_before": loss_before,
        "held_out_perplexity_before": math.exp(loss_before),
        "held_out_loss_after": loss_after,
        "held_out_perplexity_after": math.exp(loss_after),
        "held_out_mask_token_loss_before": mask_loss_before,
        "held_out_mask_token_loss_after": mask_loss_after,
        "held_out_mask_token_loss_unigram": loss_unigram,
        "train_seconds": train_seconds,
        "wall_seconds": time.monotonic() - started,
        "parameters": sum(p.numel() for p in mlm.parameters()),
        "world_size": world_size(),  # processes that trained together; each took batch_size blocks per step
        "settings": settings,
        "data": data,
        "train_loss_log": logged,
        "held_out_log": held_out_log(trainer.state.log_history),
        "resumed": bool(resume_from),
    }
    (output_dir / "pretraining.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


def resume_settings(settings_file: Path, settings: dict, documents: int) -> BertTokenizerFast:
    """The tokenizer of the run being resumed, after checking it was started with these settings."""
    if not settings_file.exists():
        raise ValueError(f"Nothing to resume in {settings_file.parent}: no {settings_file.name}. Drop --resume-from-checkpoint.")
    saved = json.loads(settings_file.read_text())
    current = {**settings, "documents": documents}
    # The vocabulary size is the trained tokenizer's, max_minutes only a guard: neither changes what is trained.
    changed = [
        f"{name}: {saved.get(name)} -> {value}"
        for name, value in current.items()
        if name not in ("vocab_size", "max_minutes") and saved.get(name) != value
    ]
    if changed:
        raise ValueError(
            f"Cannot resume {settings_file.parent}: it was started with other settings ({'; '.join(changed)}). "
            "Pass the original options, or a new --output."
        )
    return BertTokenizerFast.from_pretrained(settings_file.parent)
