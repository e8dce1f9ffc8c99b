"""The steps every training command takes around ``training.train``, in this order: evaluate the base, record the
settings and train, then (rank 0 alone) save, evaluate the trained model, write the run folder and publish it.

A command builds its data, model and loss between these calls, so each reads top to bottom as its method. The heavy
imports happen inside the functions: a command's parser builds without torch.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, replace
from pathlib import Path

from st_contrastive.commands import shared_options as shared
from st_contrastive.commands.options import settings_from
from st_contrastive.commands.push import check_push, publish
from st_contrastive.commands.run_folder import check_run_folder, record_settings
from st_contrastive.config.evaluation import EvaluationSettings
from st_contrastive.config.objectives import Matryoshka

logger = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2 (default-model extra)"  # what results.json names when --model is not given
# What to try when a method's model ends below its base on every task it was scored on.
WORSE_THAN_BASE = {
    "declutr": "DeCLUTR adapts an encoder to the text of its documents, and on an encoder already trained on pairs "
    "that can cost general STS: score it on your own task, or train fewer steps (--max-steps) at a lower "
    "--learning-rate.",
    "simcse": "SimCSE's dropout views teach an encoder already trained on pairs little and can cost STS: train fewer "
    "steps (--max-steps) at a lower --learning-rate, or start from an MLM-only base.",
    "tsdae": "TSDAE trains the embedding to rebuild its sentence, not to rank similar ones, and on an encoder already "
    "trained on pairs it costs STS: start it from an MLM-only base, or use declutr or simcse on this encoder.",
    "ct": "CT on an encoder already trained on pairs can cost STS: train fewer steps (--max-steps) at a lower "
    "--learning-rate, or start from an MLM-only base.",
    "supcon-nli": "SupCon + CE reshaped the space for NLI's three classes: train fewer steps (--max-steps) at a lower "
    "--learning-rate, or raise --supcon-weight (less cross-entropy).",
}


def dev_curve_evaluator(config):
    """The STS-B dev evaluator that scores the run every ``--eval-steps`` (None without them); it reads the rows the
    final scores read: ``--eval-max-rows`` caps both."""
    if not config.training.eval_steps:
        return None
    from st_contrastive.evaluation import sts_evaluator

    return sts_evaluator("stsb", "dev", batch_size=config.eval_batch_size, max_rows=config.eval_max_rows)


def evaluate_base(model, config) -> dict:
    """The base model's scores on ``config.eval_tasks``, after one line that says what will be evaluated. Rank 0
    only, and none with ``--no-base-eval`` where the command has it. With ``--matryoshka-dims`` the scores at each
    truncated size are under ``"by_dimension"`` (the base truncated: the floor)."""
    from st_contrastive.distributed import is_main_process

    if not is_main_process():
        return {}
    skip = getattr(config, "no_base_eval", False)
    logger.info(shared.evaluation_line(config.eval_tasks, "after training" if skip else "before and after training"))
    if skip or not config.eval_tasks:
        return {}
    return scores_by_dimension(model, config)


def with_matryoshka(model, loss, config):
    """``loss`` inside sentence-transformers' MatryoshkaLoss at ``config.matryoshka_dims`` (the loss itself without
    them). A size above the model's embedding is named in one line, before training."""
    dims = check_matryoshka_dims(model, config)
    if not dims:
        return loss
    from sentence_transformers.sentence_transformer.losses import MatryoshkaLoss

    return MatryoshkaLoss(model, loss, dims, matryoshka_weights=getattr(config, "matryoshka_weights", None))


def check_shared(checks, config, output: Path | None) -> Path | None:
    """The rest of a training command's check (``checks``: a SettingChecks): the settings they share, by their
    dataclasses' rules (evaluation; Matryoshka where the command has it), ``--push-to-hub``, the resume point and
    the output folder where known. Raises every problem found at once; returns ``output``."""
    checks.rule(lambda: settings_from(EvaluationSettings, config))
    if hasattr(config, "matryoshka_dims"):
        checks.rule(lambda: settings_from(Matryoshka, config))
    checks.call("--push-to-hub", config.push_to_hub, lambda: check_push(config.push_to_hub))
    check_run_folder(checks, config, output)
    checks.done()
    return output


def check_matryoshka_dims(model, config) -> list[int]:
    """``--matryoshka-dims``, checked against the loaded model (before its evaluation): none above its size."""
    dims = getattr(config, "matryoshka_dims", None) or []
    full = model.get_embedding_dimension()
    if dims and max(dims) > full:
        raise ValueError(
            f"--matryoshka-dims {' '.join(map(str, dims))}: the model's embeddings have {full} "
            "dimensions; give sizes up to that, the full size first"
        )
    return dims


def scores_by_dimension(model, config) -> dict:
    """``config.eval_tasks`` at full size, and with ``--matryoshka-dims`` at each smaller size too (the first
    dimensions, as ``SentenceTransformer(path, truncate_dim=64)`` gives them) under ``"by_dimension"``. Every size
    reads the one encoding of each sentence."""
    from st_contrastive.evaluation import evaluate_model
    from st_contrastive.evaluation.embedding_cache import EmbeddingCache

    cache = EmbeddingCache(model, batch_size=config.eval_batch_size)

    def scores(view: EmbeddingCache) -> dict:
        return evaluate_model(model, config.eval_tasks, max_rows=config.eval_max_rows, cache=view)

    full = scores(cache)
    dims = [d for d in getattr(config, "matryoshka_dims", None) or [] if d < model.get_embedding_dimension()]
    if not dims:
        return full
    return full | {"by_dimension": {str(dim): scores(cache.truncated(dim)) for dim in dims}}


def train_recorded(model, loss, dataset, config, output: Path, **train_kwargs):
    """Train with ``config.training`` into ``output/checkpoints``, the settings recorded first. Returns the config as
    trained and the run, which is None on the other ranks of a torchrun/accelerate job: rank 0 saves, evaluates and
    writes. A Ctrl-C checkpoints and names the command line that resumes."""
    from st_contrastive.distributed import is_main_process
    from st_contrastive.training import train

    # Recorded as trained: results.json must name the folder the checkpoints went to, not the settings' default.
    config = replace(config, training=replace(config.training, output_dir=str(output / "checkpoints")))
    main_process = is_main_process()
    if main_process:
        record_settings(output, asdict(config))
    run = train(model, loss, dataset, config.training, checkpoint_on_interrupt=True, **train_kwargs)
    return config, run if main_process else None


def write_trained_run(
    model,
    config,
    output: Path,
    run,
    *,
    method: str,
    before: dict,
    config_details: dict,
    train_details: dict | None = None,
    reading: str | None = None,
    **details,
) -> dict:
    """Save the model into ``output``, evaluate it on ``config.eval_tasks``, write ``results.json`` (the method,
    settings, training summary, ``details``, scores before and after, and the verdict: whether the model is below
    its base on every task) with the model card, and publish it where ``--push-to-hub`` says. Prints the before and
    after table, then ``reading`` (how to read it), then one line when the model is worse than its base on every
    task. Returns the results."""
    from st_contrastive.config.evaluation import averages
    from st_contrastive.reporting import verdict, verdict_line, write_run_results

    model.save(str(output))
    after = scores_by_dimension(model, config) if config.eval_tasks else {}
    before, after = dict(before), dict(after)
    by_dimension = {"before": before.pop("by_dimension", {}), "after": after.pop("by_dimension", {})}
    results = {
        "method": method,
        "model": config.model or DEFAULT_MODEL,
        "output": str(output),
        "config": asdict(config) | config_details,
        "train": run.summary() | (train_details or {}),
        **details,
        "before": before,
        "after": after,
        "after_averages": averages(after) if after else {},
    }
    if by_dimension["after"]:  # --matryoshka-dims: the same tasks with the embeddings truncated to each size
        results["by_dimension"] = by_dimension
    results["verdict"] = verdict(before, after, WORSE_THAN_BASE[method])
    results = write_run_results(output, results, run)
    publish(output, config.push_to_hub)
    for line in (reading if after else None, verdict_line(results["verdict"])):
        if line:
            print(line)
    return results
