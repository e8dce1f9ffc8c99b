"""The metadata of a run's model card (its YAML front matter): base model, training data, license, language, tags
and the ``model-index`` of the scores the run measured.

huggingface_hub's ``ModelCardData`` and ``EvalResult`` write it. sentence-transformers' own
``SentenceTransformerModelCardData`` builds its model-index only from evaluator objects held in memory by the
trainer, and needs the model to render; a run's scores come from ``results.json`` (the recipes' own evaluation), so
the hub's classes fit. :func:`fill_model_card_data` copies the same metadata into a model's
``model.model_card_data``, for a card that sentence-transformers generates itself (``model.save``).
"""

from __future__ import annotations

import re
from pathlib import Path

from huggingface_hub import EvalResult, ModelCard, ModelCardData, try_to_load_from_cache

from st_contrastive.config.evaluation import SPLITS, main_score
from st_contrastive.data_dir import SHARED_CORPORA, SHARED_NLI, SHARED_TEXT_CLASSIFICATION
from st_contrastive.default_model import HUB_ID as DEFAULT_MODEL_HUB_ID

# What a recipe records as its base model when no model is given (results.json's "model").
DEFAULT_MODEL_LABEL = "all-MiniLM-L6-v2 (default-model extra)"
# The Hub datasets the shared data were taken from (../shared/data/SOURCES.md); the Gutenberg books have no one
# Hub dataset, so they are named in the card's text only.
SHARED_DATA_ON_HUB = {
    "wiki": ("wikimedia/wikipedia",),
    "both": ("wikimedia/wikipedia",),
    "books": (),
    "snli-dev": ("stanfordnlp/snli",),
    "snli-test": ("stanfordnlp/snli",),
    "trec": ("CogComp/trec",),
    "sst2": ("stanfordnlp/sst2",),
    "sst5": ("SetFit/sst5",),
}
SHARED_DATA = {*SHARED_CORPORA, *SHARED_NLI, *SHARED_TEXT_CLASSIFICATION}  # all English
# results.json's config keys that name training data, as the recipes and the active-learning loop record them.
DATA_KEYS = ("dataset", "documents", "train", "corpus")
_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
_HUB_CACHE_FOLDER = re.compile(r"^(?:models|datasets)--(.+?)--(.+)$")  # huggingface_hub's cache: models--ORG--NAME


def hub_id(name: str) -> str | None:
    """``name`` as a Hub repository id: itself when it is ``ORG/NAME`` and no local path, the repository of a Hub
    cache snapshot (``.../models--ORG--NAME/snapshots/REV``), else None (a local folder of unknown origin)."""
    if not name:
        return None
    path = Path(name)
    if not path.exists():
        return name if _HUB_ID.match(name) else None
    for part in reversed(path.resolve().parts):
        if match := _HUB_CACHE_FOLDER.match(part):
            return f"{match[1]}/{match[2]}"
    return None


def base_model_id(model: str) -> str | None:
    """The Hub id of the base model recorded in results.json, where it is known."""
    if model == DEFAULT_MODEL_LABEL:
        return DEFAULT_MODEL_HUB_ID
    from st_contrastive.default_model import default_model

    if model and Path(model).exists() and Path(model).resolve() == Path(default_model()).resolve():
        return DEFAULT_MODEL_HUB_ID  # the default-model extra's copy, passed as a path
    return hub_id(model)


def base_card_data(model: str) -> ModelCardData | None:
    """The base model's own card metadata (its license and language carry over): the README.md of a local folder,
    or of a Hub id in the local Hub cache, which loading the model filled. Read offline; None where there is none."""
    if model == DEFAULT_MODEL_LABEL:
        from st_contrastive.default_model import default_model

        model = default_model()
    readme = Path(model) / "README.md" if model else None
    if (readme is None or not readme.is_file()) and (repo := hub_id(model)):
        cached = try_to_load_from_cache(repo, "README.md")
        readme = Path(cached) if isinstance(cached, str) else None
    if readme is None or not readme.is_file():
        return None
    return ModelCard.load(readme, ignore_metadata_errors=True).data


def training_sources(results: dict) -> list[str]:
    """The training data a run names: shared names, files or Hub dataset ids (``snli-dev+snli-test`` split)."""
    config = results.get("config", {})
    if config.get("parsed_corpus") and not config.get("corpus"):
        return [str(config["parsed_corpus"])]
    names = [str(config[key]) for key in DATA_KEYS if config.get(key)][:1]  # the first key a recipe records
    return [part for name in names for part in name.split("+")]


def dataset_ids(sources: list[str]) -> list[str]:
    """The Hub datasets among ``sources``: shared data by the dataset it was taken from, Hub ids as they are."""
    ids = []
    for source in sources:
        found = SHARED_DATA_ON_HUB.get(source) if source in SHARED_DATA else (hub_id(source),)
        ids += [name for name in found or () if name and name not in ids]
    return ids


def eval_result(task: str, metrics: dict, dimension: str | None = None) -> EvalResult:
    """One task's after-training score (× 100, as results.json holds it) as a model-index entry; ``dimension``: the
    score with the embeddings truncated to that size (``--matryoshka-dims``)."""
    metric = "pearson" if "pearson" in metrics else "spearman" if "spearman" in metrics else "accuracy"
    family, _, split = task.replace(" ", "-").rpartition("-")
    if split not in {*SPLITS, "r"}:  # a transfer task scored by cross-validation: no split
        family, split = task, None
    similarity = metric != "accuracy"
    return EvalResult(
        task_type="sentence-similarity" if similarity else "text-classification",
        task_name="Semantic Similarity" if similarity else "Text Classification",
        dataset_type=family,
        dataset_name=task if dimension is None else f"{task} ({dimension} dimensions)",
        # the Hub groups a model-index by task, dataset type, config and split: the size keeps them apart
        dataset_config=None if dimension is None else f"truncate_dim={dimension}",
        dataset_split={"dev": "validation", "r": "test"}.get(split, split),
        metric_type=metric,
        metric_name=f"{metric.capitalize()} × 100",
        metric_value=main_score(metrics),
    )


def card_metadata(results: dict, model_name: str, tags: list[str]) -> ModelCardData:
    """The card's YAML metadata for a run's ``results.json``; its model-index holds the "after" scores."""
    base = str(results.get("model") or "")
    base_card = base_card_data(base) if base else None
    sources = training_sources(results)
    language = getattr(base_card, "language", None) or (["en"] if sources and set(sources) <= SHARED_DATA else None)
    after = results.get("after") or {}
    return ModelCardData(
        base_model=base_model_id(base),
        datasets=dataset_ids(sources) or None,
        language=language,
        license=getattr(base_card, "license", None),
        library_name="sentence-transformers",
        pipeline_tag="sentence-similarity",
        tags=tags,
        model_name=model_name,
        eval_results=[eval_result(task, metrics) for task, metrics in after.items()]
        + [
            eval_result(task, metrics, dim)
            for dim, scores in results.get("by_dimension", {}).get("after", {}).items()
            for task, metrics in scores.items()
        ]
        or None,
    )


def fill_model_card_data(model, metadata: ModelCardData) -> None:
    """Copy ``metadata`` into sentence-transformers' ``model.model_card_data``, so that the card it generates on
    ``model.save`` names the base model, data, language and license (it cannot find them offline or for local
    paths). The model-index stays sentence-transformers' own (from its evaluators)."""
    card = model.model_card_data
    card.base_model = metadata.base_model or card.base_model
    card.datasets = list(metadata.datasets or card.datasets)
    if metadata.language:
        card.set_language(metadata.language)
    if metadata.license:
        card.set_license(metadata.license)
    if metadata.model_name:
        card.model_name = metadata.model_name
    card.add_tags(list(metadata.tags or []))
