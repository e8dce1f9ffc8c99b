"""``evaluate_model``: any mix of the evaluation tasks on one model.

Task names: ``stsb-{train,dev,test}``, ``sick-{train,dev,test}``, ``mr``, ``cr``, ``subj``, ``mpqa``, ``sst2``,
``sst5``, ``trec``, ``mrpc``, ``sick-r`` (SentEval's SICK-R: a regressor trained on frozen pair features); shortcuts ``sts`` (= stsb-test, sick-test) and ``transfer`` (the 8 transfer tasks).
Scores are x 100: cosine Spearman for STS, test accuracy for transfer (MRPC also F1).
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from tqdm.auto import tqdm

from st_contrastive.config.evaluation import SENTEVAL, SICK_RELATEDNESS, STS_TASKS, TransferProtocol, expand_tasks
from st_contrastive.evaluation.embedding_cache import EmbeddingCache
from st_contrastive.evaluation.sick_relatedness import evaluate_sick_relatedness
from st_contrastive.evaluation.sts import load_sts, sts_spearman
from st_contrastive.evaluation.transfer import evaluate_transfer


def evaluate_model(
    model,
    tasks: str | Iterable[str] = ("sts", "transfer"),
    batch_size: int = 32,
    max_rows: int | None = None,
    protocol: TransferProtocol = SENTEVAL,
    show_progress: bool = True,
    cache: EmbeddingCache | None = None,
) -> dict[str, dict]:
    """``{task: metrics}`` for each task; STS metrics hold ``spearman``, transfer metrics ``accuracy`` (x 100).

    Every metrics dict also has ``seconds``. Sentences shared between tasks are encoded once. ``max_rows`` limits
    each task (first STS pairs, a seeded random subset of each transfer split) for quick checks only;
    ``protocol`` sets the transfer tasks' validation (SentEval's by default); ``cache`` an :class:`EmbeddingCache` to
    encode through (its ``truncated(dim)`` view scores the first ``dim`` dimensions without encoding again).
    """
    names = expand_tasks(tasks)
    cache = cache if cache is not None else EmbeddingCache(model, batch_size=batch_size)
    results = {}
    progress = tqdm(names, desc="Evaluating", unit="task", disable=not show_progress)
    for name in progress:
        progress.set_postfix_str(name)
        start = time.perf_counter()
        if name in STS_TASKS:
            task, split = name.split("-")
            sentences1, sentences2, gold = load_sts(task, split, max_rows=max_rows)
            result = {"spearman": sts_spearman(model, sentences1, sentences2, gold, cache=cache), "n": len(gold)}
        elif name == SICK_RELATEDNESS:
            result = evaluate_sick_relatedness(cache, max_rows=max_rows, seed=protocol.seed)
        else:
            result = evaluate_transfer(model, name, protocol, max_rows=max_rows, cache=cache)
        result["seconds"] = round(time.perf_counter() - start, 2)
        results[name] = result
    return results
