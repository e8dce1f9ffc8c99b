"""Supervised contrastive learning + cross-entropy on NLI (SupCon + CE), evaluation before and after.

    st-contrastive supcon --model PATH_OR_HUB_ID [--supcon-weight 0.3 --positives all --negatives all]
    st-contrastive supcon --supcon-weight 0          # the CE-only (SBERT) baseline, same script
"""

from __future__ import annotations

import argparse
import json
import logging
import time
from pathlib import Path

import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

from st_contrastive.data.nli import load_nli
from st_contrastive.data.premise_group_sampler import PremiseGroupBatchSampler
from st_contrastive.evaluation.report import averages, evaluate_model, format_comparison
from st_contrastive.losses.nli_supcon import NLISupConLoss
from st_contrastive.models.default_model import default_model
from st_contrastive.training import ContrastiveTrainer
from st_contrastive.training.curves import plot_training_curves

logger = logging.getLogger(__name__)


def count(value: str) -> str | int:
    return value if value == "all" else int(value)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="st-contrastive supcon",
        description="SupCon + CE on NLI: (1−λ)·cross-entropy of a (u, v, |u−v|) softmax head + λ·SupCon with "
        "premises as anchors and their entailed hypotheses as positives. Defaults follow the paper "
        "(mean pooling, batch 64, 1 epoch, lr 2e-5, 10%% warm-up, τ=1.0, λ=0.3 allpalln: best on STS).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--model", default=None, help="base model: local path or Hub id; default all-MiniLM-L6-v2")
    parser.add_argument("--train", default="snli-dev+snli-test", help="NLI data: snli-dev, snli-test (joined with +), "
                        "a .tsv/.jsonl file, or a Hub dataset id such as stanfordnlp/snli")
    parser.add_argument("--split", default="train", help="split of a Hub dataset")
    parser.add_argument("--max-pairs", type=int, default=None, help="use only the first N pairs")
    parser.add_argument("--supcon-weight", type=float, default=0.3, help="λ: 0 = CE only, 1 = SupCon only "
                        "(0.3 best for STS, 0.1 best for transfer in the paper)")
    parser.add_argument("--temperature", type=float, default=1.0, help="SupCon temperature τ")
    parser.add_argument("--positives", type=count, default="all", help="entailed hypotheses per anchor: all or k")
    parser.add_argument("--negatives", type=count, default="all", help="negative hypotheses per anchor: all or k")
    parser.add_argument("--similarity", choices=["cosine", "dot"], default="cosine", help="SupCon similarity")
    parser.add_argument("--batch-size", type=int, default=64, help="pairs per batch (premise groups never split)")
    parser.add_argument("--epochs", type=float, default=1.0, help="passes over the data")
    parser.add_argument("--max-steps", type=int, default=-1, help="stop after N steps (overrides --epochs)")
    parser.add_argument("--learning-rate", type=float, default=2e-5, help="AdamW learning rate")
    parser.add_argument("--weight-decay", type=float, default=0.01, help="AdamW weight decay")
    parser.add_argument("--warmup-ratio", type=float, default=0.1, help="share of steps with linear warm-up")
    parser.add_argument("--max-grad-norm", type=float, default=1.0, help="gradient clipping (model and head)")
    parser.add_argument("--seed", type=int, default=42, help="seed")
    parser.add_argument("--output", default=None, help="output folder; default runs/<name>")
    parser.add_argument("--name", default=None, help="default supcon-nli-<λ>-<P>p<N>n, or ce-nli for λ=0")
    parser.add_argument("--eval-tasks", nargs="*", default=["sts", "transfer"], help="tasks evaluated before and "
                        "after (see `st-contrastive evaluate --help`)")
    parser.add_argument("--eval-batch-size", type=int, default=64, help="batch size for evaluation encoding")
    parser.add_argument("--eval-max-rows", type=int, default=None, help="limit each evaluation task (quick checks only)")
    parser.add_argument("--skip-before", action="store_true", help="do not evaluate the base model")
    return parser


def run_name(args) -> str:
    if args.supcon_weight == 0:
        return "ce-nli"
    return f"supcon-nli-l{args.supcon_weight:g}-{args.positives}p{args.negatives}n"


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.manual_seed(args.seed)
    model = SentenceTransformer(args.model or default_model())
    output = Path(args.output or Path("runs") / (args.name or run_name(args)))
    output.mkdir(parents=True, exist_ok=True)
    dataset = load_nli(args.train, split=args.split, max_rows=args.max_pairs)
    logger.info("Training on %d NLI pairs", len(dataset))

    before = {} if args.skip_before or not args.eval_tasks else evaluate_model(model, args.eval_tasks, batch_size=args.eval_batch_size, max_rows=args.eval_max_rows)
    loss = NLISupConLoss(model, supcon_weight=args.supcon_weight, temperature=args.temperature, positives=args.positives,
                         negatives=args.negatives, similarity=args.similarity, seed=args.seed)
    training_args = SentenceTransformerTrainingArguments(
        output_dir=str(output / "checkpoints"),
        per_device_train_batch_size=args.batch_size,
        num_train_epochs=args.epochs,
        max_steps=args.max_steps,
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        warmup_steps=args.warmup_ratio,
        lr_scheduler_type="linear",
        max_grad_norm=args.max_grad_norm,
        seed=args.seed,
        batch_sampler=PremiseGroupBatchSampler,
        logging_steps=10,
        save_strategy="no",
        report_to="none",
    )
    trainer = ContrastiveTrainer(model=model, args=training_args, train_dataset=dataset, loss=loss)
    start = time.perf_counter()
    trainer.train()
    train_seconds = time.perf_counter() - start

    model.save(str(output))
    loss.save_classifier(output / "nli_head")
    after = evaluate_model(model, args.eval_tasks, batch_size=args.eval_batch_size, max_rows=args.eval_max_rows) if args.eval_tasks else {}
    results = {
        "method": "supcon-nli",
        "model": args.model or "all-MiniLM-L6-v2 (default-model extra)",
        "output": str(output),
        "config": vars(args) | {"pairs": len(dataset)},
        "train": {
            "steps": trainer.state.global_step,
            "seconds": round(train_seconds, 1),
            "anchors_seen": loss.anchors_seen,
            "anchors_without_positive": loss.anchors_without_positive,
        },
        "before": before,
        "after": after,
        "after_averages": averages(after) if after else {},
    }
    (output / "results.json").write_text(json.dumps(results, indent=2, default=str))
    plot_training_curves(trainer.state.log_history, output / "training_curves.png", title=output.name)
    if after:
        print(format_comparison(before, after))
    print(f"Saved {output} ({trainer.state.global_step} steps, {train_seconds / 60:.1f} min); results in {output / 'results.json'}")
    return results


if __name__ == "__main__":
    main()
