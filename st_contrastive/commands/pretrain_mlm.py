"""Recipe: pretrain a small BERT with masked language modelling on a document corpus.

``st-contrastive pretrain-mlm --dataset both --output runs/mlm-small`` builds the MLM-pretrained base that DeCLUTR
starts from when no pretrained English encoder can be downloaded. It prints a results table and writes it, with
every setting, to ``pretraining.json`` next to the checkpoint.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import TOKENIZER_FILES, SettingChecks
from st_contrastive.commands.options import EVALUATION, TRAINING, option, same_option
from st_contrastive.commands.run_folder import check_output, clear_for_overwrite, setting_changes
from st_contrastive.config.pretraining import MaskedLMPretraining
from st_contrastive.config.training import TrainSettings
from st_contrastive.data_dir import SHARED_CORPORA

FINISHED = "pretraining.json"
SETTINGS = "pretraining_settings.json"  # written when training starts (pretraining.masked_lm)
# Settings that a resume does not compare: the trained tokenizer's vocabulary, a time guard, the document count
# (known once the corpus is read; the pretraining compares it then).
NOT_COMPARED_ON_RESUME = ("vocab_size", "max_minutes", "documents")


MODEL = "model"


@dataclass
class PretrainMLMConfig:
    """One MLM pretraining run; each field is the command-line option of the same name (the training options are
    :class:`TrainSettings`' own declarations, with pretraining's defaults)."""

    dataset: str = shared.dataset(
        "both",
        "'wiki' (4,518 shared Wikipedia articles), 'books' (shared Gutenberg "
        "chunks), 'both', or a path: .jsonl / .jsonl.gz (one JSON object per line, text in "
        "--text-field), .txt (one document per line, or per blank-line separated block if the "
        "file has blank lines), a saved Dataset folder, or a Hub dataset id",
    )
    text_field: str = shared.text_field()
    max_rows: int | None = shared.max_rows(what="documents of each corpus")
    tokenizer: str | None = option(
        None, help="path or Hub id of an existing tokenizer; default: train a new WordPiece one"
    )
    vocab_size: int = option(MaskedLMPretraining.vocab_size, help="WordPiece vocabulary size when training one")
    max_seq_length: int = option(
        MaskedLMPretraining.max_seq_length, help="tokens per packed block, [CLS] and [SEP] included"
    )
    eval_blocks: int = option(
        MaskedLMPretraining.eval_blocks, group=EVALUATION, help="held-out blocks for the MLM loss (at most 1/10)"
    )
    hidden_size: int = option(
        MaskedLMPretraining.hidden_size, group=MODEL, help="BERT hidden size (feed-forward is 4x)"
    )
    num_layers: int = option(MaskedLMPretraining.num_layers, group=MODEL, help="transformer layers")
    num_heads: int = option(MaskedLMPretraining.num_heads, group=MODEL, help="attention heads")
    batch_size: int = same_option(
        TrainSettings, "batch_size", MaskedLMPretraining.batch_size, help="blocks per step and process"
    )
    learning_rate: float = same_option(
        TrainSettings, "learning_rate", MaskedLMPretraining.learning_rate, help="peak AdamW learning rate"
    )
    warmup_ratio: float = same_option(TrainSettings, "warmup_ratio", MaskedLMPretraining.warmup_ratio)
    max_steps: int = same_option(
        TrainSettings,
        "max_steps",
        MaskedLMPretraining.max_steps,
        help="optimizer steps; the learning rate decays to 0 at this step",
    )
    max_minutes: float | None = option(
        None, group=TRAINING, help="stop after this many minutes of training, a guard (unset: no limit)"
    )
    mlm_probability: float = option(
        MaskedLMPretraining.mlm_probability,
        group=TRAINING,
        help="fraction of tokens masked (80/10/10) while training; the held-out loss always uses 0.15",
    )
    bf16: bool = same_option(
        TrainSettings, "bf16", False, help="bfloat16 autocast (~2x faster on CPUs with AVX512-BF16)"
    )
    dropout: float = option(
        MaskedLMPretraining.dropout, group=TRAINING, help="dropout while pretraining (the saved config gets BERT's 0.1)"
    )
    save_steps: int = same_option(
        TrainSettings,
        "save_steps",
        500,
        help="write a resumable checkpoint to OUTPUT/checkpoints and measure the held-out loss every this many steps",
    )
    seed: int = same_option(TrainSettings, "seed", MaskedLMPretraining.seed)
    num_threads: int | None = option(None, group=TRAINING, help="torch CPU threads (unset: torch's choice)")
    # pretrain-mlm resumes in its own --output: the flag alone says so.
    resume_from_checkpoint: str | None = same_option(
        TrainSettings,
        "resume_from_checkpoint",
        None,
        nargs="?",
        const="",
        metavar="OUTPUT",
        help="continue the interrupted run in --output from its last complete checkpoint (same options required)",
    )
    overwrite: bool = same_option(TrainSettings, "overwrite", False)
    output: str = shared.output("runs/mlm-small", help="folder for the checkpoint and pretraining.json")

    @property
    def resume(self) -> bool:
        return self.resume_from_checkpoint is not None


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        PretrainMLMConfig,
        "st-contrastive pretrain-mlm",
        "Train a WordPiece tokenizer and a small BertForMaskedLM on a document corpus (BERT masking, packed blocks, "
        "AdamW with linear warm-up/decay) and save a checkpoint that AutoModelForMaskedLM and sentence-transformers' "
        "Transformer both load.",
    )


def pretraining(args: PretrainMLMConfig) -> MaskedLMPretraining:
    """The run's pretraining settings, which refuse a bad one (before anything loads, when the options are checked)."""
    return options.settings_from(MaskedLMPretraining, args)


def check_inputs(args: PretrainMLMConfig) -> None:
    """Every option, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``)."""
    checks = SettingChecks()
    checks.source(args.dataset, "--dataset", tuple(SHARED_CORPORA), (args.text_field,))
    checks.at_least("--max-rows", args.max_rows, 1)
    if args.tokenizer is not None:
        checks.model(args.tokenizer, "--tokenizer", files=TOKENIZER_FILES, what="a tokenizer")
    checks.rule(lambda: pretraining(args))
    checks.at_least("--save-steps", args.save_steps, 1)
    checks.at_least("--num-threads", args.num_threads, 1)
    output = Path(args.output)
    if args.resume_from_checkpoint and Path(args.resume_from_checkpoint) != output:
        checks.add(
            "--resume-from-checkpoint",
            args.resume_from_checkpoint,
            f"pretrain-mlm resumes the run in its --output ({output}): pass --output {args.resume_from_checkpoint}",
        )
    elif args.resume:
        check_resume(checks, args, output)
    check_output(
        checks,
        output,
        overwrite=args.overwrite,
        resuming=args.resume,
        marker=FINISHED,
        inputs={"--tokenizer": args.tokenizer, "--dataset": args.dataset},
        resume_how="--resume-from-checkpoint",
    )
    checks.done()


def check_resume(checks: SettingChecks, args: PretrainMLMConfig, output: Path) -> None:
    """``--resume-from-checkpoint`` needs a run started in --output with the same options."""
    if not (output / SETTINGS).is_file():
        checks.add(
            "--resume-from-checkpoint",
            None,
            f"nothing to resume in --output {output} (no {SETTINGS}): drop --resume-from-checkpoint",
        )
        return
    saved = json.loads((output / SETTINGS).read_text())
    current = {
        name: getattr(args, name) for name in saved if name not in NOT_COMPARED_ON_RESUME and hasattr(args, name)
    }
    refused, _ = setting_changes({name: saved[name] for name in current}, current)
    if refused:
        checks.add(
            "--resume-from-checkpoint",
            None,
            f"the run in {output} was started with other settings "
            f"({'; '.join(refused)}): pass the original options, or a new --output",
        )


def main(argv: list[str] | None = None) -> dict:
    args = options.config_from_args(PretrainMLMConfig, build_parser().parse_args(argv))
    check_inputs(args)
    clear_for_overwrite(args.output, args.overwrite, marker=FINISHED)
    # Imported here, not at the top: the parser above must build without torch (instant --help).
    import torch

    from st_contrastive.data import load_corpus
    from st_contrastive.pretraining import pretrain_masked_lm

    if args.num_threads:
        torch.set_num_threads(args.num_threads)
    tokenizer = None
    if args.tokenizer:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    documents = load_corpus(args.dataset, args.text_field, limit=args.max_rows)
    results = pretrain_masked_lm(
        documents,
        args.output,
        tokenizer=tokenizer,
        **pretraining(args).to_dict(),
        save_steps=args.save_steps,
        resume=args.resume,
    )
    if results:  # under torchrun / accelerate only rank 0 returns them
        print_results(results, args)
    return results


def print_results(results: dict, args: PretrainMLMConfig) -> None:
    r, data = results, results["data"]
    stopped = " (stopped by --max-minutes)" if r["stopped_by_max_minutes"] else ""
    rows = [
        ("corpus", f"{args.dataset}: {data['documents']} docs, {data['tokens']:,} tokens"),
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
