"""SentEval's SICK-R: Tai et al.'s score distributions, a regressor that learns, and the task by name."""

import numpy as np

from st_contrastive.evaluation import evaluate_model, load_sts
from st_contrastive.evaluation.sick_relatedness import fit_relatedness, score_distribution


def test_score_distribution_puts_the_mass_on_the_two_nearest_classes():
    target = score_distribution(np.array([1.0, 3.4, 4.75, 5.0]))
    expected = np.array([[1, 0, 0, 0, 0], [0, 0, 0.6, 0.4, 0], [0, 0, 0, 0.25, 0.75], [0, 0, 0, 0, 1]])
    assert np.allclose(target, expected)
    assert np.allclose(target @ np.arange(1, 6), [1.0, 3.4, 4.75, 5.0])  # the expected class is the score


def test_the_regressor_recovers_a_score_carried_by_the_features():
    rng = np.random.default_rng(0)

    def split(n):
        y = rng.uniform(1, 5, n)
        X = np.c_[y + rng.normal(0, 0.3, n), rng.normal(size=(n, 5))].astype(np.float32)
        return X, y

    (X_train, y_train), (X_dev, y_dev), (X_test, y_test) = split(800), split(200), split(200)
    predict = fit_relatedness(X_train, y_train, X_dev, y_dev)
    assert np.corrcoef(predict(X_test), y_test)[0, 1] > 0.9
    shuffled = fit_relatedness(X_train, rng.permutation(y_train), X_dev, y_dev)
    assert abs(np.corrcoef(shuffled(X_test), y_test)[0, 1]) < 0.3  # no signal, no fit


def test_sick_r_by_name_reports_pearson_spearman_and_mse(tiny_model):
    result = evaluate_model(tiny_model, ["sick-r"], max_rows=200, show_progress=False)["sick-r"]
    assert set(result) >= {"pearson", "spearman", "mse", "dev_pearson", "n", "seconds"}
    assert result["n"] == 200
    gold = np.array(load_sts("sick", "test", max_rows=200)[2])
    assert result["mse"] < 1.2 * gold.var()  # early-stopped on dev: no worse than about the mean predictor
