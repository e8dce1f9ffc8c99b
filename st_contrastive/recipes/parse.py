"""``st-contrastive parse CORPUS -o PARSED``: parse a corpus once into a cache of parsed sentences.

The multi-view encoders read trees, and parsing is the slow part of their data pipeline: this command does it
once, resumably (re-run the same command after a crash or a ``--limit-documents`` run to continue). The summary
is printed and written to ``PARSED.summary.json``.
"""

from __future__ import annotations

import argparse
import json

from st_contrastive.data_dir import SHARED_CORPORA
from st_contrastive.recipes.help_format import DefaultsHelpFormatter

SINGLE_FILE_CORPORA = {name: files[0] for name, files in SHARED_CORPORA.items() if len(files) == 1}


def corpus_file(corpus: str) -> str:
    """The file of a shared corpus name (books, wiki), or ``corpus`` itself (a path)."""
    if corpus in SINGLE_FILE_CORPORA:
        from st_contrastive.data_dir import data_file

        return str(data_file(SINGLE_FILE_CORPORA[corpus]))
    return corpus


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
    from st_contrastive.parsing.corpus import check_corpus, check_output, parse_corpus
    from st_contrastive.parsing.make_parser import make_parser

    corpus = corpus_file(args.corpus)
    # Cheap checks first: a typo costs a second, not a model load.
    check_corpus(corpus)
    output = check_output(args.output)
    for option in ("batch_size", "max_words", "limit_documents"):
        value = getattr(args, option)
        if value is not None and value < 1:
            raise ValueError(f"--{option.replace('_', '-')} {value}: must be at least 1")
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
