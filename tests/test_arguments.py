"""Every public constructor refuses a bad argument with a ValueError (an ``ArgumentError``) that names the argument,
its value and what is allowed, whether it is called from Python, through sentence-transformers' own trainer, or by a
command; tests of ``st_contrastive/arguments.py`` and of the rules written with it."""

from __future__ import annotations

import pytest

from st_contrastive.arguments import ArgumentError, at_least, fraction, one_of, positive, seed


@pytest.mark.parametrize(
    ("rule", "value", "message"),
    [
        (positive, 0, "x=0: must be above 0"),
        (positive, float("nan"), "x=nan: must be above 0"),
        (positive, True, "x=True: must be above 0"),  # a bool is no number here
        (at_least, -1, "x=-1: must be at least 0"),
        (fraction, 1.5, "x=1.5: must be in [0, 1]"),
        (one_of, "c", "x='c': choose from a, b"),
        (seed, 2**32, "x=4294967296: must be an integer in [0, 2**32) (numpy takes 32-bit seeds)"),
    ],
)
def test_a_rule_names_the_argument_its_value_and_what_is_allowed(rule, value, message):
    extra = {at_least: (0,), one_of: (("a", "b"),)}.get(rule, ())
    with pytest.raises(ArgumentError) as error:
        rule("x", value, *extra)
    assert str(error.value) == message
    assert error.value.argument == "x" and error.value.value is value
    assert isinstance(error.value, ValueError)


def bad_calls(model):
    """(constructor call, message): the twelve calls sentence-transformers users could make on main, and more."""
    from st_contrastive.config.training import TrainSettings
    from st_contrastive.data import SpanSampler
    from st_contrastive.losses import (
        CachedDeCLUTRLoss,
        CachedSupConLoss,
        DeCLUTRLoss,
        MultiViewBilinearLoss,
        NLISupConLoss,
        SCALeLoss,
        SupConLoss,
    )
    from st_contrastive.models import LabelClassifier, NLIClassifier, WordEmbeddings

    return [
        (lambda: DeCLUTRLoss(model, temperature=0), "temperature=0: must be above 0"),
        (lambda: DeCLUTRLoss(model, temperature=-1), "temperature=-1: must be above 0"),
        (lambda: DeCLUTRLoss(model, mlm_weight=-1), "mlm_weight=-1: must be at least 0"),
        (lambda: SupConLoss(model, temperature=0), "temperature=0: must be above 0"),
        (lambda: NLISupConLoss(model, temperature=0), "temperature=0: must be above 0"),
        (lambda: SCALeLoss(model, num_labels=2, temperature=0), "temperature=0: must be above 0"),
        (lambda: SCALeLoss(model, num_labels=2, dropout_rates=(1.5,)), "dropout_rates=1.5: must be in [0, 1)"),
        (lambda: SpanSampler(anchor_beta=(0, 2)), "anchor_beta=(0, 2): needs two values above 0"),
        (lambda: NLISupConLoss(model, supcon_weight=1.5), "supcon_weight=1.5: must be in [0, 1]"),
        (lambda: NLISupConLoss(model, similarity="l2"), "similarity='l2': choose from cosine, dot"),
        (lambda: CachedSupConLoss(model, mini_batch_size=0), "mini_batch_size=0: must be a whole number >= 1"),
        (lambda: CachedDeCLUTRLoss(model, contrastive_weight=0), "contrastive_weight=0: CachedDeCLUTRLoss caches"),
        (lambda: MultiViewBilinearLoss(model, context_size=0), "context_size=0: must be at least 1"),
        (lambda: SpanSampler(min_length=64, max_length=32), "max_length=32: must be at least the shortest span"),
        (lambda: TrainSettings(warmup_ratio=1.0), "warmup_ratio=1.0: must be in [0, 1)"),
        (lambda: TrainSettings(max_steps=-2), "max_steps=-2: must be -1"),
        (lambda: TrainSettings(max_seconds=-1), "max_seconds=-1: must be at least 0"),
        (
            lambda: TrainSettings(max_seconds=60, resume_from_checkpoint="runs/x"),
            "max_seconds=60: cannot be combined with resume_from_checkpoint",
        ),
        (lambda: NLIClassifier(8, hidden_size=0), "hidden_size=0: must be at least 1"),
        (lambda: LabelClassifier(0, 2), "embedding_dimension=0: must be at least 1"),
        (lambda: WordEmbeddings(0, 8), "num_words=0: must be at least 1"),
    ]


def test_every_constructor_refuses_a_bad_argument_by_name(tiny_model):
    for call, message in bad_calls(tiny_model):
        with pytest.raises(ArgumentError) as error:
            call()
        assert str(error.value).startswith(message), (message, str(error.value))


def test_the_samplers_and_collators_refuse_theirs(tiny_model):
    from datasets import Dataset

    from st_contrastive.data import ClassBalancedBatchSampler, DeCLUTRDataCollator, PremiseGroupBatchSampler

    data = Dataset.from_dict({"premise": ["a", "b"], "hypothesis": ["c", "d"], "label": [0, 1]})
    with pytest.raises(ArgumentError, match=r"^batch_size=0: must be at least 1$"):
        ClassBalancedBatchSampler(data, batch_size=0)
    with pytest.raises(ArgumentError, match=r"^seed=-1: "):
        PremiseGroupBatchSampler(data, batch_size=2, seed=-1)
    with pytest.raises(ArgumentError, match=r"^mlm_probability=1\.0: must be in \[0, 1\)$"):
        DeCLUTRDataCollator(tiny_model.tokenizer, mlm_probability=1.0)


def test_the_settings_dataclasses_refuse_theirs():
    from st_contrastive.active.labelling_settings import LabellingSettings
    from st_contrastive.active.settings import ActiveLearningConfig
    from st_contrastive.config.evaluation import EvaluationSettings, TransferProtocol
    from st_contrastive.config.objectives import Matryoshka
    from st_contrastive.config.pretraining import MaskedLMPretraining
    from st_contrastive.config.scale import RoundTraining
    from st_contrastive.config.training import TrainSettings

    for call, message in [
        (lambda: RoundTraining(temperature=0), "temperature=0: must be above 0"),
        (lambda: RoundTraining(batch_size=0), "batch_size=0: must be at least 1"),
        (lambda: ActiveLearningConfig(acquisitions=["greedy"]), "acquisitions='greedy': choose from random"),
        (lambda: ActiveLearningConfig(oracle="human", num_seeds=2), "num_seeds=2: the human oracle labels for one"),
        (lambda: TransferProtocol(folds=1), "folds=1: must be at least 2"),
        (lambda: TransferProtocol(inner_folds=1), "inner_folds=1: must be at least 2"),
        (lambda: TransferProtocol(seed=-1), "seed=-1: must be an integer in [0, 2**32)"),
        (lambda: TrainSettings(batch_size=0), "batch_size=0: must be at least 1"),
        (lambda: TrainSettings(learning_rate=0), "learning_rate=0: must be above 0"),
        (lambda: TrainSettings(learning_rate=-1e-5), "learning_rate=-1e-05: must be above 0"),
        (lambda: TrainSettings(weight_decay=-0.1), "weight_decay=-0.1: must be at least 0"),
        (lambda: TrainSettings(max_grad_norm=-1), "max_grad_norm=-1: must be at least 0"),
        (lambda: TrainSettings(max_steps=-1, epochs=0), "epochs=0: must be above 0"),
        (lambda: TrainSettings(seed=-1), "seed=-1: must be an integer in [0, 2**32)"),
        (lambda: TrainSettings(save_steps=-1), "save_steps=-1: must be at least 0"),
        (lambda: TrainSettings(eval_steps=-1), "eval_steps=-1: must be at least 0"),
        (lambda: EvaluationSettings(["nope"]), "eval_tasks=['nope']: Unknown task(s) 'nope'"),
        (lambda: EvaluationSettings(eval_batch_size=0), "eval_batch_size=0: must be at least 1"),
        (lambda: EvaluationSettings(eval_max_rows=0), "eval_max_rows=0: must be at least 1"),
        (lambda: Matryoshka([384, 0]), "matryoshka_dims=0: must be at least 1"),
        (lambda: Matryoshka([384, 64], [1]), "matryoshka_weights=[1]: give one weight per `matryoshka_dims` size (2)"),
        (lambda: Matryoshka([384, 64], [1, 0]), "matryoshka_weights=0: must be above 0"),
        (lambda: MaskedLMPretraining(hidden_size=30, num_heads=4), "hidden_size=30: must be a multiple of"),
        (lambda: LabellingSettings(grace_seconds=-1), "grace_seconds=-1: must be at least 0"),
        (lambda: LabellingSettings(estimate_folds=1), "estimate_folds=1: must be 0 (no estimate) or at least 2"),
    ]:
        with pytest.raises(ArgumentError) as error:
            call()
        assert str(error.value).startswith(message), (message, str(error.value))
