"""The Hugging Face Hub model card of a finished run, written from its ``results.json``.

sentence-transformers' generated card names the loss class but not the method, the paper, the data or what the
run measured; this card states those, so a reader of the Hub page can judge the model without the run folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from st_contrastive.atomic_files import write_atomically
from st_contrastive.config.evaluation import averages, main_score
from st_contrastive.publishing.card_metadata import DATA_KEYS, card_metadata

SIMCSE_CITATION = """
@inproceedings{gao-etal-2021-simcse,
    title = "{S}im{CSE}: Simple Contrastive Learning of Sentence Embeddings",
    author = "Gao, Tianyu and Yao, Xingcheng and Chen, Danqi",
    booktitle = "Proceedings of the 2021 Conference on Empirical Methods in Natural Language Processing",
    year = "2021",
    url = "https://aclanthology.org/2021.emnlp-main.552",
}
"""


@dataclass(frozen=True)
class Method:
    """What a card says of a method: its name, its paper, the loss that trains it and where its citation lives."""

    name: str
    paper: str
    loss: str
    evaluation: str = (
        "Spearman × 100 for STS (SICK-R: Pearson, as SentEval), test accuracy × 100 for transfer tasks "
        "(logistic regression on frozen embeddings), as measured by the run:"
    )

    @property
    def citation(self) -> str:
        """The method's BibTeX: the loss's own ``citation``, this package's loss or sentence-transformers' (SimCSE
        trains with sentence-transformers' MNRL, whose citation is not SimCSE's)."""
        if self.loss == "MultipleNegativesRankingLoss":
            return SIMCSE_CITATION.strip()
        from sentence_transformers.sentence_transformer import losses as st_losses

        from st_contrastive import losses

        loss = getattr(losses, self.loss, None) or getattr(st_losses, self.loss)
        return loss.citation.fget(None).strip()  # a constant; no instance needed


METHODS = {
    "declutr": Method("DeCLUTR", "[Giorgi et al., ACL 2021](https://aclanthology.org/2021.acl-long.72)", "DeCLUTRLoss"),
    "supcon-nli": Method(
        "supervised contrastive learning + cross-entropy on NLI",
        "[Liao, 2021](https://arxiv.org/abs/2106.04791)",
        "NLISupConLoss",
    ),
    "simcse": Method(
        "unsupervised SimCSE",
        "[Gao et al., EMNLP 2021](https://aclanthology.org/2021.emnlp-main.552)",
        "MultipleNegativesRankingLoss",
    ),
    "tsdae": Method(
        "TSDAE (sequential denoising auto-encoder)",
        "[Wang et al., Findings of EMNLP 2021](https://aclanthology.org/2021.findings-emnlp.59)",
        "DenoisingAutoEncoderLoss",
    ),
    "ct": Method(
        "Contrastive Tension with in-batch negatives",
        "[Carlsson et al., ICLR 2021](https://openreview.net/forum?id=Ov_sMNau-PF)",
        "ContrastiveTensionLossInBatchNegatives",
    ),
    "multiview": Method(
        "multi-view structured encoders (contrasting distinct structured views)",
        "[Simoulin and Crabbé, EACL SRW 2021](https://hal.science/hal-03601428)",
        "MultiViewBilinearLoss",
    ),
    "active": Method(
        "SCALe active learning (label-based SupCon + cross-entropy over dropout views)",
        "Chauhan et al., *SCALe: Supervised Contrastive approach for Active Learning*, University of Wisconsin-Madison",
        "SCALeLoss",
        "Accuracy × 100 of the classifier head on the dataset's test split after the last round "
        "(macro F1 is in `results.json`):",
    ),
}

SBERT_CITATION = (
    '@inproceedings{reimers-2019-sentence-bert,\n    title = "Sentence-BERT: Sentence Embeddings using Siamese '
    'BERT-Networks",\n    author = "Reimers, Nils and Gurevych, Iryna",\n    booktitle = "Proceedings of the '
    '2019 Conference on Empirical Methods in Natural Language Processing",\n    year = "2019",\n'
    '    url = "https://arxiv.org/abs/1908.10084",\n}'
)


def needs_remote_code(model_dir: str | Path) -> bool:
    """Whether the checkpoint holds modules of this package (multi-view), so it loads only with the plugin."""
    modules = json.loads((Path(model_dir) / "modules.json").read_text())
    return any(module["type"].startswith("st_contrastive") for module in modules)


def training_data(results: dict) -> str:
    """What the run trained on, in words, from its config."""
    config = results.get("config", {})
    source = next((config[key] for key in DATA_KEYS if config.get(key)), "?")
    if "documents_used" in config:
        return f"{config['documents_used']:,} documents of `{source}` (spans sampled afresh every batch)"
    if "pairs" in config:
        return f"{config['pairs']:,} NLI pairs of `{source}`"
    if "labelled" in config:
        return (
            f"{config['labelled']:,} labelled rows of `{source}` (of a {config['pool']:,}-row pool), "
            f"chosen by {config['acquisition']} acquisition over {config['rounds']} rounds"
        )
    if "parsed_corpus" in config:
        return f"{config['sentences']:,} parsed sentences of `{config['parsed_corpus']}` in reading order"
    if "sentences" in config:
        return f"{config['sentences']:,} sentences cut from `{source}`"
    return "see `results.json`"


def evaluation_table(results: dict) -> str:
    """Markdown: each task's score before and after training (x 100), then the STS and transfer averages."""
    before, after = results.get("before") or {}, results.get("after") or {}
    if not after:
        return "This run was not evaluated."
    lines = ["| task | before | after | change |", "|---|---|---|---|"]
    for task, metrics in after.items():
        score = main_score(metrics)
        if task in before:
            was = main_score(before[task])
            lines.append(f"| {task} | {was:.2f} | {score:.2f} | {score - was:+.2f} |")
        else:
            lines.append(f"| {task} |  | {score:.2f} |  |")
    for group, score in averages(after).items():
        was = averages(before).get(group) if before else None
        cells = f"{was:.2f} | {score:.2f} | {score - was:+.2f}" if was is not None else f" | {score:.2f} | "
        lines.append(f"| **{group} average** | {cells} |")
    return "\n".join(lines)


def model_id(model_dir: Path, results: dict, repo_id: str | None) -> str:
    """What the card's usage example loads: the Hub repository it is published as (``push``, ``--push-to-hub``),
    else the run folder, which loads as it is (never sentence-transformers' ``sentence_transformers_model_id``
    placeholder: ``hf upload`` would publish it as such)."""
    return repo_id or results.get("config", {}).get("push_to_hub") or str(model_dir)


def model_card(model_dir: str | Path, repo_id: str | None = None) -> str:
    """The README.md of ``model_dir`` (a run folder with ``results.json``), published as ``repo_id`` if given."""
    from huggingface_hub import ModelCard

    model_dir = Path(model_dir)
    results = json.loads((model_dir / "results.json").read_text())
    method = METHODS.get(results.get("method", ""))
    if method is None:
        raise ValueError(
            f"{model_dir / 'results.json'} has method {results.get('method')!r}; a card is written for "
            f"runs of {', '.join(METHODS)}"
        )
    remote = needs_remote_code(model_dir)
    base = str(results.get("model", ""))
    train = results.get("train", {})
    config = results.get("config", {})
    training = config.get("training", {})
    loss_config = train.get("loss") or {
        k: config[k]
        for k in (
            "temperature",
            "contrastive_weight",
            "mlm_weight",
            "supcon_weight",
            "positives",
            "negatives",
            "similarity",
            "context_size",
        )
        if k in config
    }
    loss_name = train.get("loss_name", method.loss)  # an active-learning baseline arm trains with another loss
    tags = [
        "sentence-transformers",
        "sentence-similarity",
        "feature-extraction",
        "st-contrastive",
        results["method"],
        f"loss:{loss_name}",
    ]
    name = model_id(model_dir, results, repo_id)
    title = name.split("/")[-1] if repo_id or config.get("push_to_hub") else results.get("name", model_dir.name)
    metadata = card_metadata(results, title, tags)
    load = f'SentenceTransformer("{name}"' + (", trust_remote_code=True)" if remote else ")")
    labels = results.get("labels")  # an active-learning model: its classifier head is in classifier/
    head = (
        [
            "",
            "from st_contrastive.models import LabelClassifier",
            "",
            f'head = LabelClassifier.load("{name}", subfolder="classifier")',
            f"print(head.predict(embeddings))  # one of {labels}",
        ]
        if labels
        else []
    )
    install = (
        "pip install st-contrastive sentence-transformers" if remote or labels else "pip install sentence-transformers"
    )
    remote_note = (
        "\nThis model contains modules of the st-contrastive plugin (its view encoders): it loads only "
        "with the plugin installed and `trust_remote_code=True`.\n"
        if remote
        else ""
    )
    world = train.get("world_size", 1)
    batch = training.get("batch_size")
    base_line = f"[{metadata.base_model}](https://huggingface.co/{metadata.base_model})" if metadata.base_model else ""
    lines = [
        f"# {title}",
        "",
        (
            f"A sentence embedding model trained with **{method.name}** ({method.paper}) by st-contrastive, a "
            "sentence-transformers plugin (`pip install st-contrastive`)."
        ),
        remote_note,
        "## Usage",
        "",
        "```bash",
        install,
        "```",
        "",
        "```python",
        "from sentence_transformers import SentenceTransformer",
        "",
        f"model = {load}",
        'embeddings = model.encode(["A man is playing a guitar.", "Someone plays an instrument."])',
        "print(model.similarity(embeddings, embeddings))",
        *head,
        "```",
        "",
        "## Training",
        "",
        f"- **Method:** {method.name}, {method.paper}",
        f"- **Base model:** {base_line or f'`{base}`' if base else 'none: trained from scratch'}",
        f"- **Loss:** `{loss_name}` with `{json.dumps(loss_config, sort_keys=True, default=str)}`",
        f"- **Training data:** {training_data(results)}",
        f"- **Steps:** {train.get('steps', '?')}"
        + (f", batch {batch} per process × {world} process(es)" if batch else "")
        + (f", learning rate {training['learning_rate']:g}" if "learning_rate" in training else ""),
        "",
        "## Evaluation",
        "",
        method.evaluation,
        "",
        evaluation_table(results),
        "",
        "## Citation",
        "",
        "```bibtex",
        method.citation,
        "",
        SBERT_CITATION,
        "```",
        "",
    ]
    return str(ModelCard(f"---\n{metadata.to_yaml()}\n---\n\n" + "\n".join(lines)))


def write_model_card(model_dir: str | Path, repo_id: str | None = None) -> Path:
    """Write the card of the run in ``model_dir`` as its README.md, replacing sentence-transformers' generic one;
    the same card is what ``st-contrastive push`` uploads."""
    path = Path(model_dir) / "README.md"
    write_atomically(path, model_card(model_dir, repo_id))
    return path
