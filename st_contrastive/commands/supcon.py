"""Supervised contrastive learning + cross-entropy on NLI (SupCon + CE), evaluation before and after.

st-contrastive supcon --model PATH_OR_HUB_ID [--supcon-weight 0.3 --positives all --negatives all]
st-contrastive supcon --supcon-weight 0          # the CE-only (SBERT) baseline, same script
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from st_contrastive.arguments import one_of
from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import option, same_option
from st_contrastive.commands.run_folder import clear_for_overwrite
from st_contrastive.commands.training_run import (
    check_matryoshka_dims,
    check_shared,
    dev_curve_evaluator,
    evaluate_base,
    train_recorded,
    with_matryoshka,
    write_trained_run,
)
from st_contrastive.config.objectives import SIMILARITIES, GradCache, NLISupConObjective
from st_contrastive.config.scale import RoundTraining
from st_contrastive.config.training import TrainSettings
from st_contrastive.data_dir import SHARED_NLI

logger = logging.getLogger(__name__)


def count(value: str) -> str | int:
    return value if value == "all" else int(value)


OBJECTIVE = "objective"
PAPER = NLISupConObjective.paper()


@dataclass
class SupConNLIConfig:
    """One SupCon + CE run on NLI; the defaults are the paper's (batch 64, one epoch, lr 2e-5, λ 0.3, τ 1) but for
    SupCon's dot product (``--paper``: its cosine). Each field is the command-line option of the same name."""

    model: str | None = shared.model()
    dataset: str = shared.dataset(
        "snli-dev+snli-test",
        "NLI data: snli-dev, snli-test (joined with +), a .tsv/.jsonl "
        "file, or a Hub dataset id such as stanfordnlp/snli",
    )
    split: str = option("train", help="split of a Hub dataset")
    max_rows: int | None = shared.max_rows(what="pairs")
    supcon_weight: float = option(
        NLISupConObjective.supcon_weight,
        group=OBJECTIVE,
        help="λ: 0 = CE only, 1 = SupCon only (0.3 best for STS, 0.1 best for transfer in the paper)",
    )
    temperature: float = option(NLISupConObjective.temperature, group=OBJECTIVE, help="SupCon temperature τ")
    positives: str | int = option(
        NLISupConObjective.positives, group=OBJECTIVE, type=count, help="entailed hypotheses per anchor: all or k"
    )
    negatives: str | int = option(
        NLISupConObjective.negatives, group=OBJECTIVE, type=count, help="negative hypotheses per anchor: all or k"
    )
    similarity: str | None = option(
        None,
        group=OBJECTIVE,
        choices=SIMILARITIES,
        help=f"SupCon similarity (unset: {NLISupConObjective.similarity}, or {PAPER.similarity} with --paper)",
    )
    paper: bool = option(
        False,
        group=OBJECTIVE,
        help="the paper's settings (cosine similarity): for a base trained with MLM only; the default dot product "
        "improves an encoder that already embeds sentences",
    )
    mini_batch_size: int = option(
        0,
        group=OBJECTIVE,
        help="embed N sentences at a time with GradCache "
        "(CachedNLISupConLoss): same loss and gradients in the memory of N sentences (0: "
        "one pass)",
    )
    head_learning_rate: float | None = same_option(
        RoundTraining,
        "head_learning_rate",
        None,
        group=OBJECTIVE,
        help="learning rate of the softmax head(s) (unset: --learning-rate, the paper's)",
    )
    classifier_hidden_size: int | None = option(
        None,
        group=OBJECTIVE,
        help="hidden units of a two-layer softmax head "
        "(the paper's); unset: SBERT's one-layer head, with which λ=0 equals "
        "sentence-transformers' SoftmaxLoss",
    )
    eval_tasks: list[str] = shared.eval_tasks(["sts", "transfer"])
    eval_batch_size: int = shared.eval_batch_size()
    eval_max_rows: int | None = shared.eval_max_rows()
    matryoshka_dims: list[int] | None = shared.matryoshka_dims()
    matryoshka_weights: list[float] | None = shared.matryoshka_weights()
    matryoshka_heads: str | None = option(
        None,
        group=OBJECTIVE,
        choices=["full", "per-size"],
        help="with "
        "--matryoshka-dims: a head of its own per size (saved as nli_head-<size>; "
        "unset: this, better on SNLI dev in docs/loss-modifiers.md) or the head's "
        "CE at full size only",
    )
    no_base_eval: bool = shared.no_base_eval()
    output: str | None = shared.output(help="output folder; default runs/<name>")
    name: str | None = shared.name("default supcon-nli-<λ>-<P>p<N>n, or ce-nli for λ=0")
    push_to_hub: str | None = shared.push_to_hub()
    training: TrainSettings = field(
        default_factory=lambda: TrainSettings(batch_size=64, learning_rate=2e-5, weight_decay=0.01, save_steps=0)
    )

    option_help: ClassVar[dict[str, str]] = {"batch_size": "pairs per batch (premise groups never split)"}


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        SupConNLIConfig,
        "st-contrastive supcon",
        "SupCon + CE on NLI: (1−λ)·cross-entropy of a (u, v, |u−v|) softmax head + λ·SupCon with premises as anchors "
        "and their entailed hypotheses as positives. Defaults: the paper's (batch 64, 1 epoch, lr 2e-5, 10% warm-up, "
        "τ=1.0, λ=0.3, every positive and negative) with SupCon on dot products, which improves a sentence encoder "
        "such as all-MiniLM-L6-v2; --paper for the paper's cosine, for a base trained with MLM only.",
    )


def check_inputs(config: SupConNLIConfig) -> Path:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``). Returns the output folder."""

    checks = SettingChecks()
    checks.model(config.model)
    if config.paper and config.similarity not in (None, PAPER.similarity):
        checks.add("--similarity", config.similarity, "conflicts with --paper (the paper's cosine): give one of them")
    for part in config.dataset.split("+"):
        checks.source(part, "--dataset", tuple(SHARED_NLI))
    checks.at_least("--max-rows", config.max_rows, 1)
    checks.rule(lambda: objective(config))  # the loss's settings refuse a bad one
    checks.above("--head-learning-rate", config.head_learning_rate)
    checks.at_least("--classifier-hidden-size", config.classifier_hidden_size, 1)
    if config.mini_batch_size:  # 0: one pass
        checks.rule(lambda: GradCache(config.mini_batch_size))
    if config.matryoshka_heads is not None:
        checks.rule(lambda: one_of("matryoshka_heads", config.matryoshka_heads, ("full", "per-size")))
        if not config.matryoshka_dims:
            checks.add(
                "--matryoshka-heads", config.matryoshka_heads, "needs --matryoshka-dims (the sizes of the heads)"
            )
    return check_shared(checks, config, Path(config.output or Path("runs") / (config.name or run_name(config))))


def objective(config: SupConNLIConfig) -> NLISupConObjective:
    """The loss's settings: the command's options over the defaults, or over the paper's with ``--paper``."""
    similarity = config.similarity or (PAPER if config.paper else NLISupConObjective).similarity
    return options.settings_from(NLISupConObjective, replace(config, similarity=similarity))


def run_name(config) -> str:
    if config.supcon_weight == 0:
        return "ce-nli"
    return f"supcon-nli-l{config.supcon_weight:g}-{config.positives}p{config.negatives}n"


def train_supcon_nli(config: SupConNLIConfig) -> dict:
    """Read the pairs, build the loss, train, evaluate before and after, and write the run; returns its results."""
    # Recorded as trained, and compared so on a resume: an unset similarity is the default (or the paper's).
    config = replace(config, similarity=config.similarity or (PAPER if config.paper else NLISupConObjective).similarity)
    output = check_inputs(config)
    clear_for_overwrite(output, config.training.overwrite)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch
    from sentence_transformers import SentenceTransformer

    from st_contrastive.data import PremiseGroupBatchSampler, PremiseGroupDataCollator, load_nli
    from st_contrastive.default_model import default_model
    from st_contrastive.distributed import is_distributed
    from st_contrastive.losses import CachedNLISupConLoss, NLISupConLoss
    from st_contrastive.models import NLIClassifier

    dataset = load_nli(config.dataset, split=config.split, max_rows=config.max_rows)  # bad rows stop us here
    logger.info("Training on %d NLI pairs", len(dataset))
    torch.manual_seed(config.training.seed)
    model = SentenceTransformer(config.model or default_model())
    check_matryoshka_dims(model, config)
    before = evaluate_base(model, config)
    full = model.get_embedding_dimension()
    # Inside MatryoshkaLoss the heads read unit vectors (it normalizes every size): they normalize at prediction too.
    head = {"hidden_size": config.classifier_hidden_size, "normalize": bool(config.matryoshka_dims)}
    classifier = NLIClassifier(full, **head)
    size_classifiers = {
        dim: NLIClassifier(dim, **head).to(model.device)
        for dim in config.matryoshka_dims or []
        if dim < full and config.matryoshka_heads != "full"
    }
    cache = {"mini_batch_size": config.mini_batch_size} if config.mini_batch_size else {}
    loss = (CachedNLISupConLoss if cache else NLISupConLoss)(
        model,
        classifier.to(model.device),
        supcon_weight=config.supcon_weight,
        temperature=config.temperature,
        positives=config.positives,
        negatives=config.negatives,
        similarity=config.similarity,
        seed=config.training.seed,
        gather_across_devices=is_distributed(),
        size_classifiers=size_classifiers,
        **cache,
    )
    if config.head_learning_rate:  # ST's per-parameter rates; "classifier" names the size heads' parameters too
        config.training.learning_rate_mapping = {"classifier": config.head_learning_rate}
    evaluator = dev_curve_evaluator(config)
    config, run = train_recorded(
        model,
        with_matryoshka(model, loss, config),
        dataset,
        config,
        output,
        batch_sampler=PremiseGroupBatchSampler,
        data_collator=PremiseGroupDataCollator(model.preprocess),
        evaluator=evaluator,
    )
    if run is None:  # another rank of a torchrun/accelerate job
        return {}
    loss.classifier.save(str(output / "nli_head"))
    for size, head in loss.size_classifiers.items():
        head.save(str(output / f"nli_head-{size}"))
    return write_trained_run(
        model,
        config,
        output,
        run,
        method="supcon-nli",
        before=before,
        config_details={"pairs": len(dataset)},
        train_details={"anchors_seen": loss.anchors_seen, "anchors_without_positive": loss.anchors_without_positive},
    )


def main(argv: list[str] | None = None) -> dict:
    return train_supcon_nli(options.config_from_args(SupConNLIConfig, build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
