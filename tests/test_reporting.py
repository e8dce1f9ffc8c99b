"""The printed results: a table and a JSON file of an evaluation, and the change between two printed runs."""

import json

import pytest

from st_contrastive.evaluation.tasks import evaluate_model
from st_contrastive.evaluation.transfer import KFOLD_GRID, TransferProtocol
from st_contrastive.reporting import format_results_table, write_results_json


def test_report_table_and_json(tiny_model, tmp_path):
    results = evaluate_model(
        tiny_model, ["sick-dev", "trec"], max_rows=50, protocol=TransferProtocol(folds=2), show_progress=False
    )
    assert set(results["sick-dev"]) == {"spearman", "n", "seconds"}
    assert results["trec"]["C"] in KFOLD_GRID
    table = format_results_table(results)
    assert "sick-dev" in table and "trec" in table and "sts avg" in table and "transfer avg" in table
    path = write_results_json(results, tmp_path / "r.json", model="tiny")
    payload = json.loads(path.read_text())
    assert payload["model"] == "tiny"
    assert payload["averages"]["sts"] == pytest.approx(results["sick-dev"]["spearman"])


def test_printed_change_is_the_difference_of_the_printed_figures():
    from st_contrastive.reporting import format_comparison

    table = format_comparison({"stsb-test": {"spearman": 82.0349}}, {"stsb-test": {"spearman": 81.1851}})
    assert "82.03    81.19    -0.84" in table  # not -0.85, the change of the unrounded scores


def test_the_verdict_names_a_model_below_its_base_on_every_task_and_only_then():
    from st_contrastive.reporting import verdict, verdict_line

    before = {"stsb-test": {"spearman": 82.0}, "sick-test": {"pearson": 77.0}}
    worse = verdict(before, {"stsb-test": {"spearman": 80.5}, "sick-test": {"pearson": 76.0}}, "Try less.")
    assert worse == {
        "below_base_on_every_task": True,
        "changes": {"stsb-test": -1.5, "sick-test": -1.0},
        "advice": "Try less.",
    }
    assert (
        verdict_line(worse) == "Worse than the base on every task scored (stsb-test -1.50, sick-test -1.00). Try less."
    )
    mixed = verdict(before, {"stsb-test": {"spearman": 82.5}, "sick-test": {"pearson": 76.0}}, "Try less.")
    assert not mixed["below_base_on_every_task"] and mixed["advice"] is None and verdict_line(mixed) is None
    assert verdict({}, {"stsb-test": {"spearman": 80.0}}, "Try less.")["below_base_on_every_task"] is False
