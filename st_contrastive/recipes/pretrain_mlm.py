"""Recipe: pretrain a small BERT with masked language modelling on a document corpus.

``st-contrastive pretrain-mlm --corpus both --output runs/mlm-small`` builds the MLM-pretrained base that DeCLUTR
starts from when no pretrained English encoder can be downloaded. It prints a results table and writes it, with
every setting, to ``pretraining.json`` next to the checkpoint.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path

from st_contrastive.data_dir import SHARED_CORPORA
from st_contrastive.recipes.help_format import DefaultsHelpFormatter
from st_contrastive.recipes.input_checks import TOKENIZER_FILES, SettingChecks
from st_contrastive.recipes.run_folder import check_output, clear_for_overwrite, setting_changes

FINISHED = "pretraining.json"
SETTINGS = "pretraining_settings.json"  # written when training starts (pretraining.masked_lm)
# Settings that a resume does not compare: the trained tokenizer's vocabulary, a time guard, the document count
# (known once the corpus is read; the pretraining compares it then).
NOT_COMPARED_ON_RESUME = ("vocab_size", "max_minutes", "documents")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="st-contrastive pretrain-mlm",
        description="Train a WordPiece tokenizer and a small BertForMaskedLM on a document corpus (BERT masking, "
        "packed blocks, AdamW with linear warm-up/decay) and save a checkpoint that AutoModelForMaskedLM and "
        "sentence-transformers' Transformer both load.",
        formatter_class=DefaultsHelpFormatter,
    )
    data = parser.add_argument_group("data")
    data.add_argument(
        "--corpus",
        default="both",
        help="'wiki' (4,518 shared Wikipedia articles), 'books' (shared Gutenberg chunks), 'both', or a path: "
        ".jsonl / .jsonl.gz (one JSON object per line, text in --text-field), .txt (one document per line, or per "
        "blank-line separated block if the file has blank lines), a saved Dataset folder, or a Hub dataset id",
    )
    data.add_argument("--text-field", default="text", help="JSON field / dataset column holding the document text")
    data.add_argument(
        "--max-documents", type=int, default=None, help="read at most this many documents per corpus (None: all)"
    )
    data.add_argument(
        "--tokenizer", default=None, help="path or Hub id of an existing tokenizer; default: train a new WordPiece one"
    )
    data.add_argument("--vocab-size", type=int, default=8000, help="WordPiece vocabulary size when training one")
    data.add_argument(
        "--max-seq-length", type=int, default=128, help="tokens per packed block, [CLS] and [SEP] included"
    )
    data.add_argument("--eval-blocks", type=int, default=256, help="held-out blocks for the MLM loss (at most 1/10)")

    model = parser.add_argument_group("model")
    model.add_argument("--hidden-size", type=int, default=256, help="BERT hidden size (feed-forward is 4x)")
    model.add_argument("--num-layers", type=int, default=4, help="transformer layers")
    model.add_argument("--num-heads", type=int, default=4, help="attention heads")

    train = parser.add_argument_group("training")
    train.add_argument("--batch-size", type=int, default=32, help="blocks per step and process")
    train.add_argument("--learning-rate", type=float, default=5e-4, help="peak AdamW learning rate")
    train.add_argument("--warmup-ratio", type=float, default=0.06, help="fraction of --max-steps for linear warm-up")
    train.add_argument("--max-steps", type=int, default=10_000, help="optimizer steps; the LR decays to 0 at this step")
    train.add_argument(
        "--max-minutes",
        type=float,
        default=None,
        help="stop after this many minutes of training, a guard (None: no limit)",
    )
    train.add_argument(
        "--mlm-probability",
        type=float,
        default=0.15,
        help="fraction of tokens masked (80/10/10) while training; the held-out loss always uses 0.15",
    )
    train.add_argument("--bf16", action="store_true", help="bfloat16 autocast (~2x faster on CPUs with AVX512-BF16)")
    train.add_argument(
        "--dropout", type=float, default=0.0, help="dropout while pretraining (the saved config gets BERT's 0.1)"
    )
    train.add_argument(
        "--save-steps",
        type=int,
        default=500,
        help="write a resumable checkpoint to OUTPUT/checkpoints and measure the held-out loss every this many steps",
    )
    train.add_argument(
        "--resume",
        action="store_true",
        help="continue the interrupted run in --output from its last complete checkpoint (same options required)",
    )
    train.add_argument("--overwrite", action="store_true",
                       help="replace a finished or interrupted run in --output")
    train.add_argument("--seed", type=int, default=0, help="seed for model init, masking and data order")
    train.add_argument("--num-threads", type=int, default=None, help="torch CPU threads (None: torch's choice)")

    parser.add_argument("--output", default="runs/mlm-small", help="folder for the checkpoint and pretraining.json")
    return parser


def check_inputs(args: argparse.Namespace) -> None:
    """Every option, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``)."""
    checks = SettingChecks()
    checks.source(args.corpus, "--corpus", tuple(SHARED_CORPORA))
    checks.at_least("--max-documents", args.max_documents, 1)
    if args.tokenizer is not None:
        checks.model(args.tokenizer, "--tokenizer", files=TOKENIZER_FILES, what="a tokenizer")
    checks.at_least("--vocab-size", args.vocab_size, 1)
    checks.at_least("--max-seq-length", args.max_seq_length, 3, why=" ([CLS], [SEP] and a token)")
    checks.at_least("--eval-blocks", args.eval_blocks, 1)
    checks.at_least("--hidden-size", args.hidden_size, 1)
    checks.at_least("--num-layers", args.num_layers, 1)
    checks.at_least("--num-heads", args.num_heads, 1)
    if args.hidden_size >= 1 and args.num_heads >= 1 and args.hidden_size % args.num_heads:
        checks.add("--hidden-size", args.hidden_size, f"is not a multiple of --num-heads {args.num_heads} (each head "
                   "takes an equal share)")
    checks.at_least("--batch-size", args.batch_size, 1)
    checks.above("--learning-rate", args.learning_rate)
    checks.within("--warmup-ratio", args.warmup_ratio, 0, 1, why=" (a share of --max-steps)")
    checks.at_least("--max-steps", args.max_steps, 1)
    checks.above("--max-minutes", args.max_minutes)
    if not 0 < args.mlm_probability < 1:
        checks.add("--mlm-probability", args.mlm_probability, "must be above 0 and below 1 (a share of the tokens)")
    checks.within("--dropout", args.dropout, 0, 1)
    checks.at_least("--save-steps", args.save_steps, 1)
    checks.seed("--seed", args.seed)
    checks.at_least("--num-threads", args.num_threads, 1)
    output = Path(args.output)
    if args.resume:
        check_resume(checks, args, output)
    check_output(checks, output, overwrite=args.overwrite, resuming=args.resume, marker=FINISHED,
                 inputs={"--tokenizer": args.tokenizer, "--corpus": args.corpus}, resume_how="--resume")
    checks.done()


def check_resume(checks: SettingChecks, args: argparse.Namespace, output: Path) -> None:
    """``--resume`` needs a run started in --output with the same options."""
    if not (output / SETTINGS).is_file():
        checks.add("--resume", None, f"nothing to resume in --output {output} (no {SETTINGS}): drop --resume")
        return
    saved = json.loads((output / SETTINGS).read_text())
    current = {name: getattr(args, name) for name in saved if name not in NOT_COMPARED_ON_RESUME and hasattr(args, name)}
    refused, _ = setting_changes({name: saved[name] for name in current}, current)
    if refused:
        checks.add("--resume", None, f"the run in {output} was started with other settings ({'; '.join(refused)}): "
                   "pass the original options, or a new --output")


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    check_inputs(args)
    clear_for_overwrite(args.output, args.overwrite, marker=FINISHED)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch

    from st_contrastive.data import load_corpus
    from st_contrastive.pretraining import pretrain_masked_lm

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    if args.num_threads:
        torch.set_num_threads(args.num_threads)
    tokenizer = None
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    documents = load_corpus(args.corpus, args.text_field, limit=args.max_documents)
    results = pretrain_masked_lm(
        documents,
        args.output,
        tokenizer=tokenizer,
        vocab_size=args.vocab_size,
        hidden_size=args.hidden_size,
        num_layers=args.num_layers,
        num_heads=args.num_heads,
        max_seq_length=args.max_seq_length,
        batch_size=args.batch_size,
        learning_rate=args.learning_rate,
        warmup_ratio=args.warmup_ratio,
        max_steps=args.max_steps,
        max_minutes=args.max_minutes,
        mlm_probability=args.mlm_probability,
        seed=args.seed,
        bf16=args.bf16,
        dropout=args.dropout,
        eval_blocks=args.eval_blocks,
        save_steps=args.save_steps,
        resume=args.resume,
    )
    if results:  # under torchrun / accelerate only rank 0 returns them
        print_results(results, args)
    return results


def print_results(results: dict, args: argparse.Namespace) -> None:
    r, data = results, results["data"]
    stopped = " (stopped by --max-minutes)" if r["stopped_by_max_minutes"] else ""
    rows = [
        ("corpus", f"{args.corpus}: {data['documents']} docs, {data['tokens']:,} tokens"),
        ("parameters", f"{r['parameters']:,}"),
        ("steps done", f"{r['steps_done']} of {args.max_steps}{stopped}"),
        ("train loss (mean / last logged)",  # nothing logged yet when --max-minutes stops before the first log
         f"{r['train_loss_mean']:.3f} / " + (f"{last:.3f}" if (last := r["train_loss_last_logged"]) is not None else "-")),
        ("held-out MLM loss before -> after", f"{r['held_out_loss_before']:.3f} -> {r['held_out_loss_after']:.3f}"),
        ("held-out perplexity before -> after",
         f"{r['held_out_perplexity_before']:.1f} -> {r['held_out_perplexity_after']:.1f}"),
        ("[MASK]-token loss after | unigram",  # below unigram: the model reads context
         f"{r['held_out_mask_token_loss_after']:.3f} | {r['held_out_mask_token_loss_unigram']:.3f}"),
        ("[MASK]-token loss every --save-steps",
         ", ".join(f"{e['step']}: {e['mask_token_loss']:.2f}" for e in r["held_out_log"]) or "-"),
        ("wall time", f"{r['wall_seconds'] / 60:.1f} min ({r['train_seconds'] / 60:.1f} min training"
                      + (f" on {r['world_size']} processes)" if r["world_size"] > 1 else ")")),
        ("saved to", f"{args.output} (pretraining.json beside it)"),
    ]  # fmt: skip
    width = max(len(name) for name, _ in rows)
    print()
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
