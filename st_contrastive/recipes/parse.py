"""``st-contrastive parse CORPUS -o PARSED``: parse a corpus once into a cache of parsed sentences.

The multi-view encoders read trees, and parsing is the slow part of their data pipeline: this command does it
once, resumably (re-run the same command after a crash or a ``--limit-documents`` run to continue). The summary
is printed and written to ``PARSED.summary.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from st_contrastive.data_dir import SHARED_CORPORA
from st_contrastive.recipes.help_format import DefaultsHelpFormatter
from st_contrastive.recipes.input_checks import SettingChecks

SINGLE_FILE_CORPORA = {name: files[0] for name, files in SHARED_CORPORA.items() if len(files) == 1}


def corpus_file(corpus: str) -> str:
    """The file of a shared corpus name (books, wiki), or ``corpus`` itself (a path)."""
    if corpus in SINGLE_FILE_CORPORA:
        from st_contrastive.data_dir import data_file

        return str(data_file(SINGLE_FILE_CORPORA[corpus]))
    return corpus


def check_corpus_file(corpus: str, option: str = "CORPUS") -> None:
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


def check_inputs(args: argparse.Namespace) -> None:
    """Every option, from the arguments alone and before a parser loads; all problems at once (a
    ``SettingError``)."""
    checks = SettingChecks()
    if args.corpus not in SINGLE_FILE_CORPORA:
        checks.call("CORPUS", args.corpus, lambda: check_corpus_file(args.corpus))
    if not args.output.endswith(".jsonl.gz"):
        checks.add("-o", args.output, "the parsed output must be a .jsonl.gz file")
    elif Path(args.output).is_dir():
        checks.add("-o", args.output, "is a folder: name the .jsonl.gz file to write (or to resume)")
    checks.parser(args.parser)
    checks.at_least("--batch-size", args.batch_size, 1)
    checks.at_least("--max-words", args.max_words, 1)
    checks.at_least("--limit-documents", args.limit_documents, 1)
    checks.done()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="st-contrastive parse",
        description="Parse a corpus into a .jsonl.gz of parsed sentences (tokens, POS, dependency tree, constituency "
        "tree: the parser's, or head projection of the dependency parse where it has none). Rejected sentences go "
        "to PARSED.rejected.tsv; re-running on the same PARSED resumes.",
        formatter_class=DefaultsHelpFormatter,
    )
    parser.add_argument(
        "corpus",
        metavar="CORPUS",
        help=f"{' or '.join(SINGLE_FILE_CORPORA)} (the shared corpora), or a path: .jsonl / .jsonl.gz of documents "
        "(\"text\", optional \"id\"; one paragraph per line, split into sentences by the parser) or .txt (one "
        "sentence per line, never split)",
    )
    parser.add_argument("-o", "--output", required=True, metavar="PARSED", help="output .jsonl.gz")
    parser.add_argument(
        "--parser",
        default="spacy",
        help="spacy, spacy:NAME_OR_PATH, stanza (models from stanza.download) or stanza:DIR (a local stanza model "
        "folder); nothing is downloaded",
    )
    parser.add_argument(
        "--batch-size", type=int, default=256, help="paragraphs (or lines) per parser call and per checkpoint"
    )
    parser.add_argument("--max-words", type=int, default=128, help="reject sentences with more tokens than this")
    parser.add_argument(
        "--limit-documents", type=int, default=None, help="stop after this many documents (a later run continues)"
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def format_summary(summary: dict) -> str:
    rejected = ", ".join(f"{reason} {count}" for reason, count in sorted(summary["rejected"].items())) or "none"
    return "\n".join([
        f"documents             {summary['documents']}",
        f"sentences             {summary['sentences']}  ({summary['new_sentences']} in this run)",
        f"rejected              {rejected}  (see {summary['rejected_file']})",
        f"seconds               {summary['seconds']}",
        f"sentences / second    {summary['sentences_per_second']}",
    ])


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    check_inputs(args)  # cheap checks first: a typo costs a second, not a model load
    from st_contrastive.parsing.corpus import parse_corpus
    from st_contrastive.parsing.make_parser import make_parser

    corpus = corpus_file(args.corpus)
    output = Path(args.output)
    parser = make_parser(args.parser)
    summary = parse_corpus(corpus, output, parser, batch_size=args.batch_size, max_words=args.max_words,
                           limit_documents=args.limit_documents, show_progress=not args.no_progress)
    print(format_summary(summary))
    summary_path = output.with_name(output.name + ".summary.json")
    summary_path.write_text(json.dumps({**summary, "parser": parser.name, "corpus": str(corpus)}, indent=2))
    print(f"parsed sentences in {output}; summary in {summary_path}")
    return summary


if __name__ == "__main__":
    main()
