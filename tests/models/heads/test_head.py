"""Heads are sentence-transformers modules: save -> load gives the same head, predictions match scikit-learn."""

import json

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from st_contrastive.models import LabelClassifier, NLIClassifier, load_nli_classifier


def test_label_classifier_predicts_as_scikit_learn_with_the_same_weights():
    torch.manual_seed(0)
    head = LabelClassifier(8, ["abbreviation", "entity", "human"])
    embeddings = np.random.default_rng(0).normal(size=(20, 8)).astype(np.float32)
    reference = LogisticRegression()
    reference.fit(np.random.default_rng(1).normal(size=(30, 8)), np.arange(30) % 3)  # any fit; weights replaced
    reference.coef_ = head.linear.weight.detach().double().numpy()
    reference.intercept_ = head.linear.bias.detach().double().numpy()
    np.testing.assert_allclose(head.predict_proba(embeddings), reference.predict_proba(embeddings), atol=1e-6)
    assert head.predict(embeddings) == [head.labels[i] for i in reference.predict(embeddings)]
    assert LabelClassifier(4, 3).labels == ["0", "1", "2"]
    with pytest.raises(ValueError, match="at least two labels"):
        LabelClassifier(4, ["only"])


@pytest.mark.parametrize(
    "head",
    [LabelClassifier(8, ["neg", "pos"]), NLIClassifier(8), NLIClassifier(8, hidden_size=5)],
    ids=["label", "nli", "nli-two-layer"],
)
def test_save_and_load_round_trip(tmp_path, head):
    torch.nn.init.normal_(head.linear.weight)
    head.save(str(tmp_path / "head"))
    config = json.loads((tmp_path / "head" / "config.json").read_text())
    assert config == {"embedding_dimension": 8, "labels": head.labels} | (
        {"hidden_size": head.hidden_size, "normalize": False} if isinstance(head, NLIClassifier) else {}
    )
    reloaded = type(head).load(str(tmp_path / "head"))
    assert reloaded.labels == head.labels
    for key, value in head.state_dict().items():
        assert torch.equal(reloaded.state_dict()[key], value)


def test_a_head_saved_before_normalize_existed_loads_without_it(tmp_path):
    NLIClassifier(8).save(str(tmp_path / "head"))
    config = json.loads((tmp_path / "head" / "config.json").read_text())
    del config["normalize"]
    (tmp_path / "head" / "config.json").write_text(json.dumps(config))
    assert NLIClassifier.load(str(tmp_path / "head")).normalize is False


def test_nli_classifier_features_are_u_v_abs_difference():
    head = NLIClassifier(2)
    with torch.no_grad():
        head.linear.weight.zero_()
        head.linear.bias.zero_()
        head.linear.weight[0, 4:6] = 1.0  # entailment logit = sum |u - v|
    u, v = torch.tensor([[1.0, 2.0]]), torch.tensor([[4.0, 0.0]])
    assert head(u, v)[0].tolist() == [5.0, 0.0, 0.0]
    assert head.predict(u, v) == ["entailment"]
    np.testing.assert_allclose(head.predict_proba(u, v).sum(axis=1), [1.0], rtol=1e-6)


def test_loading_a_folder_without_a_head_names_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"empty: no config.json of a saved NLIClassifier"):
        load_nli_classifier(tmp_path / "empty")


def test_two_layer_nli_head_is_linear_relu_linear():
    torch.manual_seed(0)
    head = NLIClassifier(4, hidden_size=6)
    u, v = torch.randn(3, 4), torch.randn(3, 4)
    features = torch.cat([u, v, (u - v).abs()], dim=1)
    first, second = head.hidden[0], head.linear
    expected = torch.relu(features @ first.weight.T + first.bias) @ second.weight.T + second.bias
    torch.testing.assert_close(head(u, v), expected)
    assert sum(p.numel() for p in head.parameters()) == (12 * 6 + 6) + (6 * 3 + 3)


@pytest.mark.parametrize("classes", [[0, 1], [0, 2, 3]], ids=["binary", "multiclass-with-an-unseen-class"])
def test_label_classifier_from_a_fitted_logistic_regression_predicts_as_it(classes):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 8)).astype(np.float32)
    y = np.array(classes)[np.arange(60) % len(classes)]
    estimator = LogisticRegression().fit(X + y[:, None] * 0.3, y)
    head = LabelClassifier.from_logistic_regression(estimator, ["a", "b", "c", "d"])
    proba = head.predict_proba(X)
    np.testing.assert_allclose(proba[:, classes], estimator.predict_proba(X), atol=1e-5)
    assert proba[:, [c for c in range(4) if c not in classes]].max() == 0  # never predicts a class it never saw
    assert head.predict(X) == [head.labels[c] for c in estimator.predict(X)]
