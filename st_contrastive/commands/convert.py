"""``st-contrastive convert SOURCE --output DIR``: a transformers checkpoint as a sentence-transformers model.

    st-contrastive convert johngiorgi/declutr-small --output runs/declutr-small-st
    st-contrastive convert runs/mlm-base --output runs/mlm-base-st

SOURCE is a ``*ForMaskedLM`` folder or Hub repo (an original DeCLUTR release, this package's `pretrain-mlm`
output, any BERT/RoBERTa checkpoint). The result is its encoder with mean pooling, the embedding DeCLUTR trains,
saved as a regular checkpoint that loads with `SentenceTransformer(DIR)`, without this package. A SOURCE that is
already a sentence-transformers model is refused: converting would keep its transformer and drop the rest (its
pooling, a Normalize), and it loads as it is.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands.input_checks import SettingChecks, is_sentence_encoder
from st_contrastive.commands.options import OUTPUT, option


@dataclass
class ConvertConfig:
    """``st-contrastive convert SOURCE``'s options, each field the option of the same name."""

    source: str = option(positional=True, metavar="SOURCE", help="a transformers model folder or Hugging Face Hub id")
    output: str = option(group=OUTPUT, help="folder to write the sentence-transformers model to")
    max_seq_length: int | None = option(None, help="longest input in tokens; unset: the tokenizer's limit")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(ConvertConfig, "st-contrastive convert", __doc__)


def convert(source: str, output: str, max_seq_length: int | None = None) -> Path:
    """Write ``source`` with mean pooling to ``output``; returns the folder."""
    checks = SettingChecks()
    if _is_sentence_transformer(source):
        checks.add(
            "SOURCE",
            source,
            "is already a sentence-transformers model (it has a modules.json), and converting "
            "it would drop its pooling and Normalize modules: use it as it is, "
            f"SentenceTransformer({source!r}) or a recipe's --model {source}",
        )
    elif Path(source).is_dir() and not (Path(source) / "config.json").exists():
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


def _is_sentence_transformer(source: str) -> bool:
    """A saved SentenceTransformer: a folder with modules.json, or a Hub repo that has one (in the cache, or online
    unless HF_HUB_OFFLINE is set)."""
    if is_sentence_encoder(source):
        return True
    import huggingface_hub

    if Path(source).is_dir() or huggingface_hub.constants.HF_HUB_OFFLINE:
        return False
    try:
        return huggingface_hub.file_exists(source, "modules.json")
    except Exception:  # noqa: BLE001 - the Hub unreachable or the id unknown: loading the model reports it
        return False


def main(argv: list[str] | None = None) -> Path:
    args = options.config_from_args(ConvertConfig, build_parser().parse_args(argv))
    output = convert(args.source, args.output, args.max_seq_length)
    print(f"Saved {output}: {args.source} with mean pooling. Load it with SentenceTransformer({str(output)!r}).")
    return output


if __name__ == "__main__":
    main()
