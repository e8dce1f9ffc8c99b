"""`st-contrastive evaluate`: the results JSON it writes, and its help."""

import json

import pytest

from st_contrastive.commands.evaluate import build_parser, main


def test_evaluate_cli_writes_json(tiny_model, tmp_path, capsys):
    model_dir = tmp_path / "model"
    tiny_model.save(str(model_dir))
    output = tmp_path / "out" / "results.json"
    argv = [str(model_dir), "--eval-tasks", "stsb-test", "cr", "--eval-max-rows", "60", "--eval-folds", "3"]
    main([*argv, "--output", str(output), "--eval-batch-size", "16", "--device", "cpu", "--no-progress"])
    payload = json.loads(output.read_text())
    assert set(payload["results"]) == {"stsb-test", "cr"}
    assert set(payload["averages"]) == {"sts", "transfer"}
    assert payload["model"] == str(model_dir) and payload["tasks"] == ["stsb-test", "cr"]
    assert payload["settings"]["eval_max_rows"] == 60 and payload["settings"]["eval_folds"] == 3
    assert "stsb-test" in capsys.readouterr().out

    with pytest.raises(ValueError, match="Valid tasks"):
        main([str(model_dir), "--eval-tasks", "nope"])


def test_evaluate_cli_help_documents_every_option():
    parser = build_parser()
    for action in parser._actions:
        assert action.help, f"option {action.dest} has no help"
    assert "--eval-max-rows" in parser.format_help()
