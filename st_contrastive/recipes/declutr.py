"""DeCLUTR continued training (Giorgi et al., 2021): the paper's hyperparameters as defaults, evaluation before/after.

    st-contrastive declutr --model PATH_OR_HUB_ID --documents corpus.jsonl.gz [--max-steps N ...]
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

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, data_dir, load_documents, prepare_declutr_dataset
from st_contrastive.evaluation.report import evaluate_model, format_comparison
from st_contrastive.evaluation.sts import sts_evaluator
from st_contrastive.losses import DeCLUTRLoss
from st_contrastive.models.default_model import default_model
from st_contrastive.training import ContrastiveTrainer
from st_contrastive.training.curves import plot_training_curves

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="st-contrastive declutr",
        description="DeCLUTR: continue training an encoder with NT-Xent over sampled spans plus MLM on the anchors. "
        "Defaults are the paper's (§4); the checkpoint is a plain Transformer + Pooling SentenceTransformer.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    data = parser.add_argument_group("model and data")
    data.add_argument("--model", default=None, help="base model: local path or Hub id (SentenceTransformer or *ForMaskedLM "
                      "checkpoint); default all-MiniLM-L6-v2 from the default-model extra")
    data.add_argument("--documents", default=None, help="documents: .jsonl(.gz)/.txt file, saved dataset folder or Hub "
                      "dataset id; default $ST_CONTRASTIVE_DATA/corpus/docs.jsonl.gz (Wikipedia)")
    data.add_argument("--text-field", default="text", help="field holding the document text")
    data.add_argument("--max-documents", type=int, default=None, help="use only the first N documents")
    data.add_argument("--output", default=None, help="output folder; default runs/<name>")
    data.add_argument("--name", default=None, help="model name: declutr-small for a 6-layer base, declutr-base for "
                      "12 layers (the paper's names), declutr-<L>layer otherwise")

    spans = parser.add_argument_group("span sampling (paper §3.2)")
    spans.add_argument("--num-anchors", type=int, default=2, help="anchor spans per document (A)")
    spans.add_argument("--num-positives", type=int, default=2, help="positive spans per anchor (P)")
    spans.add_argument("--min-length", type=int, default=32, help="shortest span in tokens (ℓ_min)")
    spans.add_argument("--max-length", type=int, default=512, help="longest span in tokens (ℓ_max); lowered to fit "
                       "the model's position embeddings with its special tokens")
    spans.add_argument("--strategy", choices=["default", "adjacent", "subsuming"], default="default",
                       help="positive placement: overlapping, adjacent and subsumed (default) or one kind only")
    spans.add_argument("--min-anchor-gap", type=int, default=None, help="minimum tokens between anchors of a "
                       "document; default max_length (reference code; the ACL text says 2·max_length)")
    spans.add_argument("--short-documents", choices=["error", "skip", "shrink"], default="error",
                       help="documents under 2·A·max_length tokens: stop with an error, skip them, or shrink spans")

    objective = parser.add_argument_group("objective")
    objective.add_argument("--temperature", type=float, default=0.05, help="NT-Xent temperature τ")
    objective.add_argument("--contrastive-weight", type=float, default=1.0, help="weight of NT-Xent (0: MLM only)")
    objective.add_argument("--mlm-weight", type=float, default=1.0, help="weight of MLM (0: contrastive only)")
    objective.add_argument("--mlm-probability", type=float, default=0.15, help="share of anchor tokens masked")

    train = parser.add_argument_group("optimisation")
    train.add_argument("--batch-size", type=int, default=16, help="documents per batch (N)")
    train.add_argument("--learning-rate", type=float, default=5e-5, help="AdamW learning rate")
    train.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay (not on biases/LayerNorm)")
    train.add_argument("--warmup-ratio", type=float, default=0.1, help="share of steps with linear warm-up, then "
                       "linear decay (slanted triangular)")
    train.add_argument("--max-grad-norm", type=float, default=1.0, help="gradient clipping norm (model and MLM head)")
    train.add_argument("--epochs", type=float, default=1.0, help="passes over the documents")
    train.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (overrides --epochs)")
    train.add_argument("--seed", type=int, default=42, help="seed for sampling, masking and initialisation")
    train.add_argument("--save-steps", type=int, default=500, help="checkpoint every N steps")
    train.add_argument("--resume-from-checkpoint", default=None, help="trainer checkpoint folder to resume from")
    train.add_argument("--save-masked-lm", action="store_true", help="also write the encoder with its MLM head "
                       "(*ForMaskedLM) to <output>/masked-lm, to continue training later")
    train.add_argument("--bf16", action="store_true", help="bfloat16 autocast (GPU)")

    evaluation = parser.add_argument_group("evaluation")
    evaluation.add_argument("--eval-tasks", nargs="*", default=["stsb-test"], help="tasks evaluated before and after "
                            "training (see `st-contrastive evaluate --help`)")
    evaluation.add_argument("--eval-steps", type=int, default=0, help="evaluate STS-B dev every N steps (0: never)")
    evaluation.add_argument("--eval-batch-size", type=int, default=64, help="batch size for encoding evaluation data")
    return parser


def model_name(model: SentenceTransformer) -> str:
    layers = getattr(model[0].auto_model.config, "num_hidden_layers", None)
    return {6: "declutr-small", 12: "declutr-base"}.get(layers, f"declutr-{layers}layer")


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    torch.manual_seed(args.seed)

    model = SentenceTransformer(args.model or default_model())
    output = Path(args.output or Path("runs") / (args.name or model_name(model)))
    output.mkdir(parents=True, exist_ok=True)
    max_positions = getattr(model[0].auto_model.config, "max_position_embeddings", None)
    max_length = args.max_length
    if max_positions is not None and max_length + 2 > max_positions:
        max_length = max_positions - 2
        logger.warning("--max-length %d lowered to %d to fit the model's %d positions", args.max_length, max_length, max_positions)

    sampler = SpanSampler(
        num_anchors=args.num_anchors,
        num_positives=args.num_positives,
        min_length=min(args.min_length, max_length),
        max_length=max_length,
        strategy=args.strategy,
        min_anchor_gap=args.min_anchor_gap,
        short_documents=args.short_documents,
        seed=args.seed,
    )
    documents = load_documents(args.documents or data_dir() / "corpus" / "docs.jsonl.gz", args.text_field, limit=args.max_documents)
    dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
    logger.info("Training on %d documents", len(dataset))

    before = evaluate_model(model, args.eval_tasks, batch_size=args.eval_batch_size) if args.eval_tasks else {}

    mlm_probability = args.mlm_probability if args.mlm_weight > 0 else 0.0
    loss = DeCLUTRLoss(model, args.temperature, args.contrastive_weight, args.mlm_weight)
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
        bf16=args.bf16,
        logging_steps=max(1, min(10, args.max_steps // 20 if args.max_steps > 0 else 10)),
        save_steps=args.save_steps,
        save_total_limit=2,
        eval_strategy="steps" if args.eval_steps else "no",
        eval_steps=args.eval_steps or None,
        report_to="none",
    )
    trainer = ContrastiveTrainer(
        model=model,
        args=training_args,
        train_dataset=dataset,
        loss=loss,
        data_collator=DeCLUTRDataCollator(model.tokenizer, sampler, mlm_probability=mlm_probability, seed=args.seed),
        evaluator=sts_evaluator("stsb", "dev", batch_size=args.eval_batch_size) if args.eval_steps else None,
    )
    start = time.perf_counter()
    trainer.train(resume_from_checkpoint=args.resume_from_checkpoint)
    train_seconds = time.perf_counter() - start

    model.save(str(output))
    if args.save_masked_lm and args.mlm_weight > 0:
        loss.save_masked_lm(str(output / "masked-lm"))
    after = evaluate_model(model, args.eval_tasks, batch_size=args.eval_batch_size) if args.eval_tasks else {}

    losses = [row for row in trainer.state.log_history if "loss" in row]
    results = {
        "method": "declutr",
        "model": args.model or "all-MiniLM-L6-v2 (default-model extra)",
        "output": str(output),
        "config": vars(args) | {"max_length": max_length, "documents_used": len(dataset)},
        "train": {"steps": trainer.state.global_step, "seconds": round(train_seconds, 1), "last_log": losses[-1] if losses else {}},
        "before": before,
        "after": after,
    }
    (output / "results.json").write_text(json.dumps(results, indent=2, default=str))
    plot_training_curves(trainer.state.log_history, output / "training_curves.png", title=output.name)
    if before:
        print(format_comparison(before, after))
    print(f"Saved {output} ({trainer.state.global_step} steps in {train_seconds / 60:.1f} min); results in {output / 'results.json'}")
    return results


if __name__ == "__main__":
    main()
