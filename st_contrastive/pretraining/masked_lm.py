"""Pretrain a small BERT with masked language modelling: the MLM-pretrained base DeCLUTR starts from.

No MLM-pretrained English encoder can be downloaded on every machine, and users with a new domain or language
need one of their own; this trains a WordPiece tokenizer and a small ``BertForMaskedLM`` on a document corpus.
:func:`pretrain_masked_lm` is the pipeline; the functions below it are its steps, in the order it calls them.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterable
from pathlib import Path

import torch
from datasets import Dataset
from transformers import BertForMaskedLM, BertTokenizerFast, Trainer, TrainingArguments, set_seed
from transformers.trainer_utils import TrainOutput

from st_contrastive.config.pretraining import MaskedLMPretraining
from st_contrastive.distributed import has_accelerator, is_main_process, main_process_first, world_size
from st_contrastive.pretraining.block_masking import BlockMaskingCollator
from st_contrastive.pretraining.blocks import train_and_held_out_blocks
from st_contrastive.pretraining.held_out import fixed_masked_batches, held_out_mlm_losses, unigram_loss
from st_contrastive.pretraining.model import MaskedPositionsMLM, build_masked_lm
from st_contrastive.pretraining.resume import checkpoint_to_resume, resumed_tokenizer, save_run_start
from st_contrastive.pretraining.trainer_callbacks import HeldOutLossLog, StopAfterMinutes, held_out_log
from st_contrastive.pretraining.wordpiece import train_wordpiece_tokenizer
from st_contrastive.training.interrupt import StopOnInterrupt, train_until_done_or_interrupted

logger = logging.getLogger(__name__)


def pretrain_masked_lm(
    texts: Iterable[str] | Dataset,
    output_dir: str | Path,
    *,
    tokenizer: BertTokenizerFast | None = None,
    vocab_size: int = MaskedLMPretraining.vocab_size,
    hidden_size: int = MaskedLMPretraining.hidden_size,
    num_layers: int = MaskedLMPretraining.num_layers,
    num_heads: int = MaskedLMPretraining.num_heads,
    max_seq_length: int = MaskedLMPretraining.max_seq_length,
    batch_size: int = MaskedLMPretraining.batch_size,
    learning_rate: float = MaskedLMPretraining.learning_rate,
    warmup_ratio: float = MaskedLMPretraining.warmup_ratio,
    max_steps: int = MaskedLMPretraining.max_steps,
    max_minutes: float | None = MaskedLMPretraining.max_minutes,
    mlm_probability: float = MaskedLMPretraining.mlm_probability,
    seed: int = MaskedLMPretraining.seed,
    bf16: bool = MaskedLMPretraining.bf16,
    dropout: float = MaskedLMPretraining.dropout,
    eval_blocks: int = MaskedLMPretraining.eval_blocks,
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
    (faster on CPUs with AVX512-BF16 and on recent GPUs, docs/declutr.md; weights stay float32). ``dropout`` applies while
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
    checkpoints = output_dir / "checkpoints"
    # Refuses a bad argument, naming it, before any work.
    settings = MaskedLMPretraining(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        num_layers=num_layers,
        num_heads=num_heads,
        max_seq_length=max_seq_length,
        batch_size=batch_size,
        learning_rate=learning_rate,
        warmup_ratio=warmup_ratio,
        max_steps=max_steps,
        max_minutes=max_minutes,
        mlm_probability=mlm_probability,
        seed=seed,
        bf16=bf16,
        dropout=dropout,
        eval_blocks=eval_blocks,
    ).to_dict()  # fmt: skip
    documents = texts if isinstance(texts, Dataset) else Dataset.from_dict({"text": list(texts)})
    documents = documents.select_columns(["text"])
    tokenizer = prepare_tokenizer(documents, output_dir, tokenizer, settings, resume)
    settings["vocab_size"] = len(tokenizer)
    train_blocks, held_out_blocks, data = train_and_held_out_blocks(
        documents, tokenizer, max_seq_length, eval_blocks, seed
    )
    logger.info("Corpus: %s", data)

    model = initial_model(tokenizer, hidden_size, num_layers, num_heads, max_seq_length, dropout, seed)
    held_out = fixed_masked_batches(held_out_blocks, tokenizer, batch_size, seed)
    main_process = is_main_process()  # under torchrun / accelerate only rank 0 measures and reports
    if main_process:
        before = held_out_mlm_losses(model, held_out, tokenizer.mask_token_id)
        unigram = unigram_loss(train_blocks, held_out, tokenizer.mask_token_id, len(tokenizer))

    args = training_arguments(
        checkpoints, batch_size, max_steps, learning_rate, warmup_ratio, bf16, logging_steps, save_steps, seed
    )
    stopper = StopAfterMinutes(max_minutes) if max_minutes is not None else None
    interrupt = StopOnInterrupt()  # Ctrl-C: a checkpoint after the step in progress, then TrainingInterrupted
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=train_blocks,
        data_collator=BlockMaskingCollator(tokenizer, mlm_probability, seed),
        callbacks=[
            HeldOutLossLog(model, held_out, tokenizer.mask_token_id, every=save_steps),
            interrupt,
            *([stopper] if stopper else []),
        ],
    )
    train_started = time.monotonic()
    resume_from = checkpoint_to_resume(checkpoints) if resume else None
    train_output = train_until_done_or_interrupted(trainer, interrupt, resume_from, checkpoints)
    train_seconds = time.monotonic() - train_started
    if not main_process:  # the other ranks of a torchrun/accelerate job: rank 0 measures and saves
        return {}
    after = held_out_mlm_losses(model, held_out, tokenizer.mask_token_id)
    return save_and_report(
        model,
        output_dir,
        trainer,
        train_output,
        stopped=bool(stopper and stopper.stopped),
        before=before,
        after=after,
        unigram=unigram,
        train_seconds=train_seconds,
        started=started,
        settings=settings,
        data=data,
        resumed=bool(resume_from),
    )


def prepare_tokenizer(
    documents: Dataset, output_dir: Path, tokenizer: BertTokenizerFast | None, settings: dict, resume: bool
) -> BertTokenizerFast:
    """The run's tokenizer: on resume the interrupted run's; else ``tokenizer``, or one of ``settings["vocab_size"]``
    trained on ``documents``, saved with the settings before training starts."""
    # Under torchrun / accelerate rank 0 trains and saves the tokenizer; the other ranks then load that one.
    with main_process_first():
        if resume:
            return resumed_tokenizer(output_dir, settings, len(documents))
        if not is_main_process():
            return BertTokenizerFast.from_pretrained(output_dir)
        if tokenizer is None:
            vocab_size = settings["vocab_size"]
            logger.info("Training a WordPiece tokenizer (vocab %d) on %d documents", vocab_size, len(documents))
            tokenizer = train_wordpiece_tokenizer(
                (text for text in documents["text"]), vocab_size=vocab_size, model_max_length=settings["max_seq_length"]
            )
        save_run_start(output_dir, tokenizer, settings, len(documents))
        return tokenizer


def initial_model(
    tokenizer: BertTokenizerFast,
    hidden_size: int,
    num_layers: int,
    num_heads: int,
    max_seq_length: int,
    dropout: float,
    seed: int,
) -> MaskedPositionsMLM:
    """The randomly initialised model of ``seed``; a resume then loads the checkpoint's weights into it."""
    set_seed(seed)
    # Dropout defaults to off while pretraining: in under an epoch there is no overfitting to fight, and it slows
    # learning (Geiping & Goldstein 2022, "Cramming"). BERT's 0.1 is written to the saved config for fine-tuning.
    return build_masked_lm(
        tokenizer,
        hidden_size,
        num_layers,
        num_heads,
        max_position_embeddings=max_seq_length,
        dropout=dropout,
        model_class=MaskedPositionsMLM,
    )


def training_arguments(
    checkpoints: Path,
    batch_size: int,
    max_steps: int,
    learning_rate: float,
    warmup_ratio: float,
    bf16: bool,
    logging_steps: int | None,
    save_steps: int,
    seed: int,
) -> TrainingArguments:
    """AdamW with linear warm-up and decay, a checkpoint every ``save_steps`` into ``checkpoints``."""
    return TrainingArguments(
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


def save_and_report(
    model: MaskedPositionsMLM,
    output_dir: Path,
    trainer: Trainer,
    train_output: TrainOutput,
    *,
    stopped: bool,
    before: tuple[float, float],
    after: tuple[float, float],
    unigram: float,
    train_seconds: float,
    started: float,
    settings: dict,
    data: dict,
    resumed: bool,
) -> dict:
    """Save the plain ``BertForMaskedLM`` for fine-tuning, and write the run's results to ``pretraining.json``.

    ``before`` and ``after`` are the held-out (MLM loss, [MASK]-token loss) before and after training.
    """
    output_dir.mkdir(parents=True, exist_ok=True)
    mlm: BertForMaskedLM = model.as_masked_lm()
    mlm.config.hidden_dropout_prob = mlm.config.attention_probs_dropout_prob = 0.1
    mlm.save_pretrained(output_dir)  # the tokenizer is already there, saved before training
    (loss_before, mask_loss_before), (loss_after, mask_loss_after) = before, after
    logged = [(entry["step"], entry["loss"]) for entry in trainer.state.log_history if "loss" in entry]
    results = {
        "steps_done": trainer.state.global_step,
        "stopped_by_max_minutes": stopped,
        "train_loss_mean": train_output.training_loss,
        "train_loss_first_logged": logged[0][1] if logged else None,
        "train_loss_last_logged": logged[-1][1] if logged else None,
        "held_out_loss_before": loss_before,
        "held_out_perplexity_before": math.exp(loss_before),
        "held_out_loss_after": loss_after,
        "held_out_perplexity_after": math.exp(loss_after),
        "held_out_mask_token_loss_before": mask_loss_before,
        "held_out_mask_token_loss_after": mask_loss_after,
        "held_out_mask_token_loss_unigram": unigram,
        "train_seconds": train_seconds,
        "wall_seconds": time.monotonic() - started,
        "parameters": sum(p.numel() for p in mlm.parameters()),
        "world_size": world_size(),  # processes that trained together; each took batch_size blocks per step
        "settings": settings,
        "data": data,
        "train_loss_log": logged,
        "held_out_log": held_out_log(trainer.state.log_history),
        "resumed": resumed,
    }
    (output_dir / "pretraining.json").write_text(json.dumps(results, indent=2) + "\n")
    return results
