"""``st-contrastive convert SOURCE --output DIR``: a transformers checkpoint as a sentence-transformers model.

    st-contrastive convert johngiorgi/declutr-small --output runs/declutr-small-st
    st-contrastive convert runs/mlm-base --output runs/mlm-base-st

SOURCE is a ``*ForMaskedLM`` folder or Hub repo (an original DeCLUTR release, this package's `pretrain-mlm`
output, any BERT/RoBERTa checkpoint). The result is its encoder with mean pooling, the embedding DeCLUTR trains,
saved as a regular checkpoint that loads with `SentenceTransformer(DIR)`, without this package.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from st_contrastive.recipes.help_format import DefaultsHelpFormatter
from st_contrastive.recipes.input_checks import SettingChecks


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="st-contrastive convert", description=__doc__,
                                     formatter_class=DefaultsHelpFormatter)
    parser.add_argument("source", metavar="SOURCE", help="a transformers model folder or Hugging Face Hub id")
    parser.add_argument("--output", required=True, help="folder to write the sentence-transformers model to")
    parser.add_argument("--max-seq-length", type=int, default=None,
                        help="longest input in tokens; unset: the tokenizer's limit")
    return parser


def convert(source: str, output: str, max_seq_length: int | None = None) -> Path:
    """Write ``source`` with mean pooling to ``output``; returns the folder."""
    checks = SettingChecks()
    if Path(source).is_dir() and not (Path(source) / "config.json").exists():
        checks.add("SOURCE", source, "has no config.json: it is not a transformers model folder")
    else:
        checks.model(source, "SOURCE", files=("config.json",))
    if Path(output).is_file() or (Path(output).is_dir() and any(Path(output).iterdir())):
        checks.add("--output", output, "exists and is not empty: choose a new folder")
    checks.at_least("--max-seq-length", max_seq_length, 1)
    checks.done()
    from st_contrastive.models import mean_pooled_encoder

    model = mean_pooled_encoder(source, max_seq_length)
    model.save(output)
    return Path(output)


def main(argv: list[str] | None = None) -> Path:
    args = build_parser().parse_args(argv)
    output = convert(args.source, args.output, args.max_seq_length)
    print(f"Saved {output}: {args.source} with mean pooling. Load it with SentenceTransformer({str(output)!r}).")
    return output


if __name__ == "__main__":
    main()
