"""Multi-view structured sentence encoders (Simoulin & Crabbé, 2021): two views, context prediction, evaluation.

st-contrastive multiview --views dep,seq [--dataset books] [--max-steps N ...]
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import ClassVar

from st_contrastive.commands import options
from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.input_checks import SettingChecks, installed
from st_contrastive.commands.options import EVALUATION, option
from st_contrastive.commands.parse import SINGLE_FILE_CORPORA, check_corpus_file, corpus_file
from st_contrastive.commands.push import publish
from st_contrastive.commands.run_folder import clear_for_overwrite, record_settings
from st_contrastive.commands.training_run import check_shared, dev_curve_evaluator
from st_contrastive.config.evaluation import TransferProtocol
from st_contrastive.config.training import TrainSettings
from st_contrastive.extras import MissingExtra

logger = logging.getLogger(__name__)

VIEWS = ("seq", "dep", "const")
# The paper's evaluation (Table 1): SentEval's classification tasks and SICK-R (a regressor trained on SICK train);
# sick-test adds the cosine Spearman on SICK test.
PAPER_TASKS = ["mr", "cr", "subj", "mpqa", "trec", "mrpc", "sick-r", "sick-test"]


VIEW_OPTIONS = "views (paper §2.2, A.2)"


@dataclass
class MultiViewConfig:
    """One multi-view run: corpus and parser, views and sizes, objective, evaluation, optimisation (A.2). Each field
    is the command-line option of the same name."""

    views: str = option(
        "dep,seq",
        group=VIEW_OPTIONS,
        help=f"two of {', '.join(VIEWS)}, comma-separated (the same "
        "twice is the single-view control, e.g. seq,seq = QuickThought)",
    )
    dataset: str = shared.dataset(
        "books",
        "documents in reading order: a shared corpus (books, wiki) or a "
        ".jsonl(.gz)/.txt file; parsed once into --parse-cache",
    )
    parsed: str | None = option(None, help="an already parsed corpus (st-contrastive parse output); replaces --dataset")
    max_rows: int | None = option(300, help="parse only the first N documents of --dataset (0: all)")
    max_sentences: int | None = option(None, help="train on the first N parsed sentences (unset: all)")
    parser: str = option(
        "spacy",
        help="spacy, spacy:MODEL, stanza or stanza:DIR; also parses new text at encode time (saved with the model)",
    )
    parse_cache: str = option(
        "runs/parsed", help="folder of parsed corpora and evaluation sentences, reused by later runs"
    )
    word_dim: int = option(128, group=VIEW_OPTIONS, help="word embedding size of trained embeddings (the paper: 300)")
    dim: int = option(
        256, group=VIEW_OPTIONS, help="size of each view's sentence embedding (the paper: 2400, so 4800 in all)"
    )
    vocab_size: int = option(
        50_000,
        group=VIEW_OPTIONS,
        help="most frequent corpus "
        "words with an embedding (the paper: 50K); with --word-vectors, the vectors' words the "
        "corpus uses most, then the others in the vectors' order",
    )
    word_vectors: str | None = option(
        None,
        group=VIEW_OPTIONS,
        help="frozen pre-trained vectors instead: a GloVe text "
        "file or spacy:en_core_web_md (the paper's GloVe configuration)",
    )
    attention: bool = option(
        True,
        group=VIEW_OPTIONS,
        flag="--no-attention",
        help="plain child sum in the DEP view instead of the paper's attentive one",
    )
    context_size: int = option(1, group=VIEW_OPTIONS, help="neighbours on each side that are positives")
    # Both scoring directions averaged: this package's addition; False is the paper's.
    symmetric: bool = option(
        True,
        group=VIEW_OPTIONS,
        flag="--no-symmetric",
        help="score only c(f(s), g(s')), the "
        "paper's objective (§2.1); by default the direction c(g(s), f(s')) is added and both are "
        "averaged, an addition of this package",
    )
    eval_tasks: list[str] = shared.eval_tasks(list(PAPER_TASKS), when="after training")
    eval_folds: int = option(10, group=EVALUATION, help="cross-validation folds of the transfer tasks (SentEval: 10)")
    eval_max_rows: int | None = shared.eval_max_rows()
    eval_batch_size: int = shared.eval_batch_size(256)
    output: str | None = shared.output(help="output folder; default runs/multiview-<views>")
    push_to_hub: str | None = shared.push_to_hub()
    training: TrainSettings = field(
        default_factory=lambda: TrainSettings(
            batch_size=400, learning_rate=5e-4, warmup_ratio=0.0, max_steps=150, max_grad_norm=1.0
        )
    )

    option_help: ClassVar[dict[str, str]] = {"batch_size": "consecutive sentences per batch"}

    @property
    def view_pair(self) -> list[str]:
        return [v.strip().lower() for v in self.views.split(",")]


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(
        MultiViewConfig,
        "st-contrastive multiview",
        "Multi-view structured sentence encoders: two views (SEQ bi-GRU, DEP attentive child-sum Tree-LSTM, CONST "
        "binary Tree-LSTM) trained to find each sentence's neighbours with a bilinear score; the embedding is [f(s); "
        "g(s)]. Defaults are the paper's (batch 400, Adam 5e-4, Xavier, no dropout) with a small step budget. "
        "--max-steps 0 evaluates the untrained (random-init) encoders: the paper's control.",
    )


def check_inputs(config: MultiViewConfig) -> Path:
    """Every setting, from the arguments alone and before anything heavy loads; all problems at once (a
    ``SettingError``). Returns the output folder."""
    checks = SettingChecks()
    views = config.view_pair
    if len(views) != 2 or any(v not in VIEWS for v in views):
        checks.add("--views", config.views, f"two of {', '.join(VIEWS)}, comma-separated (e.g. dep,seq)")
    if config.parsed is not None:
        checks.existing_file(config.parsed, "--parsed")
    elif config.dataset not in SINGLE_FILE_CORPORA:
        checks.call("--dataset", config.dataset, lambda: check_corpus_file(config.dataset, "--dataset"))
    checks.at_least("--max-rows", config.max_rows, 0, why=" (0: all)")
    checks.at_least("--max-sentences", config.max_sentences, 1)
    checks.parser(config.parser)
    if Path(config.parse_cache).exists() and not Path(config.parse_cache).is_dir():
        checks.add("--parse-cache", config.parse_cache, "is a file: pass a folder (created if missing)")
    checks.at_least("--word-dim", config.word_dim, 1)
    checks.at_least("--dim", config.dim, 1)
    checks.at_least("--vocab-size", config.vocab_size, 1)
    if config.word_vectors and config.word_vectors.startswith("spacy:"):
        if not installed("spacy"):
            checks.add("--word-vectors", config.word_vectors, str(MissingExtra("spacy", "parsing")))
    else:
        checks.existing_file(config.word_vectors, "--word-vectors")
    checks.at_least("--context-size", config.context_size, 1)
    if config.training.batch_size == 1:
        checks.add("--batch-size", 1, "a batch of one sentence holds no neighbour to predict: use at least 2")
    checks.rule(lambda: TransferProtocol(folds=config.eval_folds), folds="--eval-folds")
    return check_shared(checks, config, Path(config.output or Path("runs") / f"multiview-{'-'.join(views)}"))


def parsed_corpus(config: MultiViewConfig, parser) -> Path:
    """The parsed corpus to train on: ``--parsed``, or ``--dataset`` parsed (resumably) into the parse cache."""
    from st_contrastive.parsing import parse_corpus

    if config.parsed:
        return Path(config.parsed)
    corpus = Path(corpus_file(config.dataset))
    documents = config.max_rows or None
    name = f"{corpus.name.split('.')[0]}-{documents or 'all'}docs-{parser.name.replace(':', '_')}.jsonl.gz"
    path = Path(config.parse_cache) / name
    parse_corpus(corpus, path, parser, limit_documents=documents)
    return path


def train_multiview(config: MultiViewConfig) -> dict:
    """Parse, build the two views, train with the bilinear context loss, evaluate, write the run; returns its
    results."""
    output = check_inputs(config)
    clear_for_overwrite(output, config.training.overwrite)
    import torch

    from st_contrastive.data import ContextBlockBatchSampler, load_sentence_corpus
    from st_contrastive.distributed import is_distributed, is_main_process, main_process_first
    from st_contrastive.evaluation import evaluate_model
    from st_contrastive.losses import MultiViewBilinearLoss
    from st_contrastive.models import load_word_vectors, multiview_model
    from st_contrastive.parsing import make_parser
    from st_contrastive.reporting import write_run_results
    from st_contrastive.training import TrainResult, train

    parser = make_parser(config.parser)
    with main_process_first():  # under torchrun / accelerate, rank 0 parses into the cache and the others read it
        corpus = parsed_corpus(config, parser)
    dataset, sentences = load_sentence_corpus(corpus, config.max_sentences)
    vectors = load_word_vectors(config.word_vectors) if config.word_vectors else None
    views = config.view_pair
    # Recorded as trained: results.json must name the folder the checkpoints went to, not the settings' default.
    config = replace(config, training=replace(config.training, output_dir=str(output / "checkpoints")))
    torch.manual_seed(config.training.seed)
    model = multiview_model(
        views,
        sentences,
        parser=config.parser,
        word_dim=config.word_dim,
        dim=config.dim,
        attention=config.attention,
        max_words=config.vocab_size,
        word_vectors=vectors,
    )
    model[0].add_parses(sentences)
    derived = sum(s.constituency is None or s.constituency_source == "head-projection" for s in sentences)
    logger.info(
        "Training %s on %d sentences of %s; constituency trees derived by head projection: %d of %d",
        "+".join(views),
        len(dataset),
        corpus,
        derived,
        len(sentences),
    )

    # Evaluation sentences are parsed as they are encoded, once for every run that shares the cache folder.
    model[0].cache_parses_in(Path(config.parse_cache) / f"evaluation-{parser.name.replace(':', '_')}.jsonl.gz")
    if config.training.max_steps == 0:  # the control: the untrained encoders
        run = TrainResult(0, 0.0, [])
    else:
        # Under DDP each rank takes its own block of consecutive sentences and scores it against every rank's:
        # the labels are corpus positions, so contexts stay exact across blocks.
        loss = MultiViewBilinearLoss(
            model, context_size=config.context_size, symmetric=config.symmetric, gather_across_devices=is_distributed()
        )
        if is_main_process():
            record_settings(output, asdict(config))
        run = train(
            model,
            loss,
            dataset,
            config.training,
            batch_sampler=ContextBlockBatchSampler,
            evaluator=dev_curve_evaluator(config),
            checkpoint_on_interrupt=True,
        )
    if not is_main_process():  # the other ranks of a torchrun/accelerate job: rank 0 saves, evaluates and writes
        return {}
    model.save(str(output))

    after = {}
    logger.info(shared.evaluation_line(config.eval_tasks, "after training"))
    if config.eval_tasks:
        protocol = TransferProtocol(folds=config.eval_folds)
        model.eval()
        after = evaluate_model(
            model,
            config.eval_tasks,
            batch_size=config.eval_batch_size,
            max_rows=config.eval_max_rows,
            protocol=protocol,
        )

    results = {
        "method": "multiview",
        "views": views,
        "output": str(output),
        "config": asdict(config)
        | {
            "parsed_corpus": str(corpus),
            "sentences": len(dataset),
            "constituency": f"{derived} of {len(sentences)} trees derived by head projection"
            if derived
            else "parser trees",
        },
        "train": run.summary(),
        "after": after,
    }
    results = write_run_results(output, results, run)
    publish(output, config.push_to_hub)
    return results


def main(argv: list[str] | None = None) -> dict:
    return train_multiview(options.config_from_args(MultiViewConfig, build_parser().parse_args(argv)))


if __name__ == "__main__":
    main()
