"""``st-contrastive parse --dataset CORPUS --output PARSED``: parse a corpus once into a cache of parsed sentences.

The multi-view encoders read trees, and parsing is the slow part of their data pipeline: this command does it
once, resumably (re-run the same command after a crash or a ``--max-rows`` run to continue). The summary
is printed and written to ``PARSED.summary.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from st_contrastive.commands import options
from st_contrastive.commands.input_checks import SettingChecks
from st_contrastive.commands.options import OUTPUT, option
from st_contrastive.data_dir import SHARED_CORPORA

SINGLE_FILE_CORPORA = {name: files[0] for name, files in SHARED_CORPORA.items() if len(files) == 1}


def corpus_file(corpus: str) -> str:
    """The file of a shared corpus name (books, wiki), or ``corpus`` itself (a path)."""
    if corpus in SINGLE_FILE_CORPORA:
        from st_contrastive.data_dir import data_file

        return str(data_file(SINGLE_FILE_CORPORA[corpus]))
    return corpus


def check_corpus_file(corpus: str, option: str = "--dataset") -> None:
    """A corpus to parse must be a file of a known type with some text in it (an empty one would give empty
    outputs and exit 0). Cheap: it reads up to the first line with text, before any parser loads."""
    from st_contrastive.parsing.corpus import CORPUS_SUFFIXES

    path = Path(corpus)
    if not path.is_file():
        raise FileNotFoundError(f"{option} {corpus}: {'not a regular file' if path.exists() else 'no such file'}")
    if not path.name.endswith(CORPUS_SUFFIXES):
        raise ValueError(f"{option} {corpus}: unknown file type (use {', '.join(CORPUS_SUFFIXES)})")
    try:
        with (gzip.open if path.name.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
            if not any(line.strip() for line in f):
                raise ValueError(f"{option} {corpus}: no text in it (empty, or blank lines only): nothing to parse")
    except (EOFError, OSError, UnicodeDecodeError):
        return  # damaged: the parse reports it with the line it stops at


@dataclass
class ParseConfig:
    """``st-contrastive parse``'s options, each field the option of the same name."""

    dataset: str | None = option(
        None,
        help=f"the corpus: {' or '.join(SINGLE_FILE_CORPORA)} (the shared corpora), "
        'or a path: .jsonl / .jsonl.gz of documents ("text", optional "id"; one '
        "paragraph per line, split into sentences by the parser) or .txt (one sentence per "
        "line, never split)",
    )
    output: str | None = option(None, group=OUTPUT, metavar="PARSED", help="output .jsonl.gz")
    parser: str = option(
        "spacy",
        help="spacy, spacy:NAME_OR_PATH, stanza (models from stanza.download) or stanza:DIR "
        "(a local stanza model folder); nothing is downloaded",
    )
    batch_size: int = option(256, help="paragraphs (or lines) per parser call and per checkpoint")
    max_words: int = option(128, help="reject sentences with more tokens than this")
    max_rows: int | None = option(None, help="stop after this many documents (a later run continues)")
    no_progress: bool = option(False, group=OUTPUT, help="hide the progress bar")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        ParseConfig,
        "st-contrastive parse",
        "Parse a corpus into a .jsonl.gz of parsed sentences (tokens, POS, dependency tree, constituency tree: the "
        "parser's, or head projection of the dependency parse where it has none). Rejected sentences go to "
        "PARSED.rejected.tsv; re-running on the same PARSED resumes.",
    )


def check_inputs(args: ParseConfig) -> None:
    """Every option, from the arguments alone and before a parser loads; all problems at once (a
    ``SettingError``)."""
    checks = SettingChecks()
    if args.dataset is None:
        checks.add("--dataset", None, "is required: the corpus to parse")
    elif args.dataset not in SINGLE_FILE_CORPORA:
        checks.call("--dataset", args.dataset, lambda: check_corpus_file(args.dataset, "--dataset"))
    if args.output is None:
        checks.add("--output", None, "is required: the .jsonl.gz file to write (or to resume)")
    elif not args.output.endswith(".jsonl.gz"):
        checks.add("--output", args.output, "the parsed output must be a .jsonl.gz file")
    elif Path(args.output).is_dir():
        checks.add("--output", args.output, "is a folder: name the .jsonl.gz file to write (or to resume)")
    checks.parser(args.parser)
    checks.at_least("--batch-size", args.batch_size, 1)
    checks.at_least("--max-words", args.max_words, 1)
    checks.at_least("--max-rows", args.max_rows, 1)
    checks.done()


def format_summary(summary: dict) -> str:
    rejected = ", ".join(f"{reason} {count}" for reason, count in sorted(summary["rejected"].items())) or "none"
    return "\n".join(
        [
            f"documents             {summary['documents']}",
            f"sentences             {summary['sentences']}  ({summary['new_sentences']} in this run)",
            f"rejected              {rejected}  (see {summary['rejected_file']})",
            f"seconds               {summary['seconds']}",
            f"sentences / second    {summary['sentences_per_second']}",
        ]
    )


def main(argv: list[str] | None = None) -> dict:
    args = options.config_from_args(ParseConfig, build_parser().parse_args(argv))
    check_inputs(args)  # cheap checks first: a typo costs a second, not a model load
    from st_contrastive.parsing.corpus import parse_corpus
    from st_contrastive.parsing.make_parser import make_parser

    corpus = corpus_file(args.dataset)
    output = Path(args.output)
    parser = make_parser(args.parser)
    summary = parse_corpus(
        corpus,
        output,
        parser,
        batch_size=args.batch_size,
        max_words=args.max_words,
        limit_documents=args.max_rows,
        show_progress=not args.no_progress,
    )
    print(format_summary(summary))
    summary_path = output.with_name(output.name + ".summary.json")
    summary_path.write_text(json.dumps({**summary, "parser": parser.name, "corpus": str(corpus)}, indent=2))
    print(f"parsed sentences in {output}; summary in {summary_path}")
    return summary


if __name__ == "__main__":
    main()
