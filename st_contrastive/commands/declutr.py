"""DeCLUTR continued training (Giorgi et al., 2021): the paper's hyperparameters as defaults, evaluation before/after.

st-contrastive declutr --model PATH_OR_HUB_ID --dataset corpus.jsonl.gz [--max-steps N ...]
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import (
    SettingChecks,
    in_hub_cache,
    is_sentence_encoder,
)
from st_contrastive.commands.options import OUTPUT, option
from st_contrastive.commands.run_folder import check_run_folder, clear_for_overwrite
from st_contrastive.commands.training_run import (
    check_shared,
    dev_curve_evaluator,
    evaluate_base,
    train_recorded,
    with_matryoshka,
    write_trained_run,
)
from st_contrastive.config.objectives import DeCLUTRObjective, GradCache, Masking
from st_contrastive.config.training import TrainSettings
from st_contrastive.data.span_sampler import SHORT_DOCUMENTS, STRATEGIES
from st_contrastive.data_dir import SHARED_CORPORA

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)


SPANS = "span sampling (paper §3.2)"
OBJECTIVE = "objective"


@dataclass
class DeCLUTRConfig:
    """One DeCLUTR run: model and data, span sampling (§3.2), objective, evaluation and optimisation (§4); each
    field is the command-line option of the same name."""

    model: str | None = shared.model(
        "base model: a local folder or Hub id (SentenceTransformer or *ForMaskedLM "
        f"checkpoint); {shared.DEFAULT_MODEL_HELP}"
    )
    dataset: str = shared.dataset(
        "wiki",
        "documents: a shared corpus (wiki, books, both), a .jsonl(.gz)/.txt file, a "
        "saved dataset folder or a Hub dataset id",
    )
    text_field: str = shared.text_field()
    max_rows: int | None = shared.max_rows(what="documents")
    num_anchors: int = option(2, group=SPANS, help="anchor spans per document (A)")
    num_positives: int = option(2, group=SPANS, help="positive spans per anchor (P)")
    min_span_length: int = option(32, group=SPANS, help="shortest span in tokens (ℓ_min)")
    max_span_length: int = option(
        512,
        group=SPANS,
        help="longest span in tokens (ℓ_max); lowered to fit the model's position embeddings with its special tokens",
    )
    strategy: str = option(
        "default",
        group=SPANS,
        choices=STRATEGIES,
        help="positive placement: overlapping, adjacent and subsumed (default) or one kind only",
    )
    min_anchor_gap: int | None = option(
        None,
        group=SPANS,
        help="minimum tokens between anchors of a document; "
        "default --max-span-length (reference code; the ACL text says twice that)",
    )
    # The paper kept only documents long enough for its spans.
    short_documents: str = option(
        "skip",
        group=SPANS,
        choices=SHORT_DOCUMENTS,
        help="documents too short for A "
        "anchors of ℓ_max tokens and their gaps: skip and count them (the paper kept only "
        "documents of 2·A·ℓ_max tokens or more), stop with an error, or shrink their spans",
    )
    temperature: float = option(DeCLUTRObjective.temperature, group=OBJECTIVE, help="NT-Xent temperature τ")
    contrastive_weight: float = option(
        DeCLUTRObjective.contrastive_weight, group=OBJECTIVE, help="weight of NT-Xent (0: MLM only)"
    )
    mlm_weight: float = option(DeCLUTRObjective.mlm_weight, group=OBJECTIVE, help="weight of MLM (0: contrastive only)")
    mlm_probability: float = option(Masking.mlm_probability, group=OBJECTIVE, help="share of anchor tokens masked")
    mini_batch_size: int = option(
        0,
        group=OBJECTIVE,
        help="embed N spans at a time with GradCache "
        "(CachedDeCLUTRLoss): memory of N spans for any --batch-size, same loss and "
        "gradients (0: one pass)",
    )
    mlm_head_warmup_steps: int = option(
        0,
        group=OBJECTIVE,
        help="when the base ships no MLM head: train the new head "
        "alone (encoder frozen, MLM only) for this many steps before joint training",
    )
    mlm_head_learning_rate: float = option(
        1e-3, group=OBJECTIVE, help="peak learning rate of those head-only steps (linear decay, no warm-up)"
    )
    save_masked_lm: bool = option(
        False,
        group=OUTPUT,
        help="also write the encoder with its MLM head (*ForMaskedLM) "
        "to <output>/masked-lm, to continue training later",
    )
    eval_tasks: list[str] = shared.eval_tasks(["stsb-test"])
    eval_batch_size: int = shared.eval_batch_size()
    eval_max_rows: int | None = shared.eval_max_rows()
    no_base_eval: bool = shared.no_base_eval()
    matryoshka_dims: list[int] | None = shared.matryoshka_dims()
    matryoshka_weights: list[float] | None = shared.matryoshka_weights()
    output: str | None = shared.output(help="output folder; default runs/<name>")
    name: str | None = shared.name(
        "model name: declutr-small for a 6-layer base, declutr-base for 12 layers (the "
        "paper's names), declutr-<L>layer otherwise"
    )
    push_to_hub: str | None = shared.push_to_hub()
    training: TrainSettings = field(
        default_factory=lambda: TrainSettings(batch_size=16, learning_rate=5e-5, weight_decay=0.1, save_steps=500)
    )

    option_help: ClassVar[dict[str, str]] = {"batch_size": "documents per batch (N)"}


# SpanSampler's arguments by the options that set them (where the names differ).
SPAN_OPTIONS = {"min_length": "--min-span-length", "max_length": "--max-span-length"}
# The library arguments a message about the data may name, by the options that set them.
ARGUMENT_OPTIONS = SPAN_OPTIONS | {"short_documents": "--short-documents", "text_field": "--text-field"}


def span_sampler(config: DeCLUTRConfig, max_length: int | None = None):
    """The run's SpanSampler: the options as given, or with spans of at most ``max_length`` tokens (what the model
    takes, the shortest lowered with it)."""
    from st_contrastive.data.span_sampler import SpanSampler

    return SpanSampler(
        num_anchors=config.num_anchors,
        num_positives=config.num_positives,
        min_length=config.min_span_length if max_length is None else min(config.min_span_length, max_length),
        max_length=config.max_span_length if max_length is None else max_length,
        strategy=config.strategy,
        min_anchor_gap=config.min_anchor_gap,
        short_documents=config.short_documents,
        seed=config.training.seed,
    )


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        DeCLUTRConfig,
        "st-contrastive declutr",
        "DeCLUTR: continue training an encoder with NT-Xent over sampled spans plus MLM on the anchors. Defaults are "
        "the paper's (§4); the checkpoint is a plain Transformer + Pooling SentenceTransformer.",
    )


def check_inputs(config: DeCLUTRConfig) -> Path | None:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``, one line each on the command line). Returns the output folder when it is known before the
    model loads (its default name depends on the model's depth)."""
    checks = SettingChecks()
    checks.model(config.model)
    checks.source(config.dataset, "--dataset", tuple(SHARED_CORPORA), (config.text_field,))
    checks.at_least("--max-rows", config.max_rows, 1)
    checks.rule(lambda: span_sampler(config), **SPAN_OPTIONS)
    checks.rule(lambda: DeCLUTRObjective(config.temperature, config.contrastive_weight, config.mlm_weight))
    checks.rule(lambda: Masking(config.mlm_probability))
    if config.mlm_weight > 0 and config.mlm_probability == 0:
        checks.add(
            "--mlm-probability", 0, "masks no token, so MLM has nothing to predict: raise it, or set --mlm-weight 0"
        )
    if config.mini_batch_size:
        checks.rule(lambda: GradCache(config.mini_batch_size))
        if config.contrastive_weight == 0:
            checks.add(
                "--mini-batch-size",
                config.mini_batch_size,
                "GradCache needs the contrastive term (--contrastive-weight > 0); use 0 for MLM-only training",
            )
    checks.at_least("--mlm-head-warmup-steps", config.mlm_head_warmup_steps, 0)
    checks.above("--mlm-head-learning-rate", config.mlm_head_learning_rate)
    return check_shared(checks, config, known_output(config))  # an unknown output is checked once the model loads


def known_output(config: DeCLUTRConfig) -> Path | None:
    """``--output``, or its default when the base's depth can be read from its config.json (None otherwise)."""
    if config.output or config.name:
        return Path(config.output or Path("runs") / config.name)
    layers = base_layers(config.model)
    return Path("runs") / declutr_name(layers) if layers else None


def base_layers(model: str | None) -> int | None:
    """``num_hidden_layers`` from the config.json of a model folder or of its Hub cache snapshot."""
    from st_contrastive.default_model import default_model

    model = model or default_model()
    candidates = [Path(model) / "config.json", Path(model) / "0_Transformer" / "config.json"]
    if not Path(model).exists() and in_hub_cache(model, ("config.json",)):
        from huggingface_hub import constants

        snapshots = Path(constants.HF_HUB_CACHE) / f"models--{model.replace('/', '--')}" / "snapshots"
        candidates = sorted(snapshots.glob("*/config.json"))
    for path in candidates:
        try:
            return json.loads(path.read_text()).get("num_hidden_layers")
        except (OSError, ValueError, AttributeError):
            continue
    return None


def declutr_name(layers: int | None) -> str:
    return {6: "declutr-small", 12: "declutr-base"}.get(layers, f"declutr-{layers}layer")


def model_name(model: SentenceTransformer) -> str:
    return declutr_name(getattr(model[0].auto_model.config, "num_hidden_layers", None))


def train_declutr(config: DeCLUTRConfig) -> dict:
    """Build the spans and the loss, train, evaluate before and after, and write the run; returns its results."""
    known = check_inputs(config)
    if known is not None:
        clear_for_overwrite(known, config.training.overwrite)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch
    from sentence_transformers import SentenceTransformer

    from st_contrastive.data import DeCLUTRDataCollator, load_corpus, prepare_declutr_dataset
    from st_contrastive.data.declutr_collator import longest_span
    from st_contrastive.default_model import default_model
    from st_contrastive.distributed import is_distributed
    from st_contrastive.losses import CachedDeCLUTRLoss, DeCLUTRLoss

    documents = load_corpus(config.dataset, config.text_field, limit=config.max_rows)
    torch.manual_seed(config.training.seed)
    model = SentenceTransformer(config.model or default_model())
    sentence_encoder = is_sentence_encoder(config.model or default_model())
    output = Path(config.output or Path("runs") / (config.name or model_name(model)))
    if known is None:  # the default name needed the model's depth: check its folder now, still before any write
        checks = SettingChecks()
        check_run_folder(checks, config, output, resume=False)
        checks.done()
        clear_for_overwrite(output, config.training.overwrite)
    fits, why = longest_span(model)
    max_length = min(config.max_span_length, fits)
    if max_length < config.max_span_length:
        logger.warning(
            "--max-span-length %d lowered to %d: that is what the model takes (%s)%s",
            config.max_span_length,
            max_length,
            why,
            f"; --min-span-length {config.min_span_length} lowered with it"
            if max_length < config.min_span_length
            else "",
        )
    sampler = span_sampler(config, max_length)
    dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
    logger.info("Training on %d documents", len(dataset))
    mlm_probability = config.mlm_probability if config.mlm_weight > 0 else 0.0
    cache = {"mini_batch_size": config.mini_batch_size} if config.mini_batch_size else {}
    loss = (CachedDeCLUTRLoss if cache else DeCLUTRLoss)(
        model,
        temperature=config.temperature,
        contrastive_weight=config.contrastive_weight,
        mlm_weight=config.mlm_weight,
        gather_across_devices=is_distributed(),
        **cache,
    )
    collator = DeCLUTRDataCollator(model.tokenizer, sampler, mlm_probability=mlm_probability, seed=config.training.seed)
    evaluator = dev_curve_evaluator(config)
    with_matryoshka(model, loss, config)  # sizes the model does not have stop here, before any evaluation

    before = evaluate_base(model, config)
    head_warmup = None
    resuming = config.training.resume_from_checkpoint is not None  # the checkpoint holds the warmed-up head
    if config.mlm_head_warmup_steps and config.mlm_weight > 0 and not loss.mlm_head.pretrained and not resuming:
        head_warmup = warm_up_mlm_head(model, loss, dataset, collator, config, output)
    config, run = train_recorded(
        model,
        with_matryoshka(model, loss, config),
        dataset,
        config,
        output,
        data_collator=collator,
        evaluator=evaluator,
    )
    if run is None:  # another rank of a torchrun/accelerate job
        return {}
    if config.save_masked_lm and config.mlm_weight > 0:
        loss.save_masked_lm(str(output / "masked-lm"))
    results = write_trained_run(
        model,
        config,
        output,
        run,
        method="declutr",
        before=before,
        config_details={
            "max_span_length": max_length,
            "min_span_length": sampler.min_length,
            "documents_used": len(dataset),
            "documents_skipped": len(documents) - len(dataset),
        },
        reading=reading(sentence_encoder, config.dataset),
        mlm_head_warmup=head_warmup.summary() if head_warmup else None,
        base_is_sentence_encoder=sentence_encoder,
    )
    return results


def reading(sentence_encoder: bool, documents: str) -> str:
    """How to read the before/after table, which depends on what the base was."""
    if sentence_encoder:
        return (
            f"The base is already a sentence encoder: DeCLUTR continues its training on '{documents}' to adapt it "
            "to that text. General STS is expected to move by a point or two either way, not to gain."
        )
    return (
        "The base is a language model read by mean pooling: the change above is what DeCLUTR's training adds "
        "to a plain pretrained encoder."
    )


def warm_up_mlm_head(model, loss, dataset, collator, config: DeCLUTRConfig, output: Path):
    """Train the new MLM head alone (MLM term only, encoder frozen) before joint training; its learning rate
    decays linearly from ``mlm_head_learning_rate`` over those steps."""
    from st_contrastive.training import train_heads_only

    settings = replace(
        config.training,
        max_steps=config.mlm_head_warmup_steps,
        warmup_ratio=0.0,
        save_steps=0,
        eval_steps=0,
        learning_rate=config.mlm_head_learning_rate,
        output_dir=str(output / "head-warmup"),
    )
    weights = loss.contrastive_weight, loss.mlm_weight
    loss.contrastive_weight, loss.mlm_weight = 0.0, 1.0
    try:
        return train_heads_only(model, loss, dataset, settings, data_collator=collator)
    finally:
        loss.contrastive_weight, loss.mlm_weight = weights


def main(argv: list[str] | None = None) -> dict:
    return train_declutr(options.config_from_args(DeCLUTRConfig, build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
