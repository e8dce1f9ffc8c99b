"""The one training entry point: options -> settings -> trainer arguments, and a real run through it."""

import csv
import dataclasses

import pytest

from st_contrastive.commands.options import build_parser, config_from_args
from st_contrastive.data_dir import data_file
from st_contrastive.losses import SupConLoss
from st_contrastive.training import TrainSettings, train


@dataclasses.dataclass
class Command:
    """A command's config as the commands declare it: the training options with this command's defaults."""

    training: TrainSettings = dataclasses.field(
        default_factory=lambda: TrainSettings(batch_size=64, learning_rate=2e-5, weight_decay=0.01)
    )


def test_options_round_trip_to_settings_and_trainer_arguments():
    defaults = Command().training
    parser = build_parser(Command, "train", "the training options")
    assert config_from_args(Command, parser.parse_args([])).training == defaults
    parsed = config_from_args(
        Command, parser.parse_args(["--batch-size", "8", "--max-steps", "40", "--save-steps", "20"])
    )
    settings = dataclasses.replace(parsed.training, output_dir="runs/x")
    assert (settings.batch_size, settings.max_steps, settings.learning_rate) == (8, 40, 2e-5)
    args = settings.training_arguments()
    assert args.output_dir == "runs/x" and args.per_device_train_batch_size == 8
    assert args.learning_rate == 2e-5 and args.weight_decay == 0.01 and args.warmup_steps == 0.1
    assert args.save_strategy == "steps" and args.save_steps == 20 and args.logging_steps == 2
    assert TrainSettings().training_arguments().save_strategy == "no"


def test_train_runs_the_contrastive_trainer_and_reports(tmp_path, tiny_model):
    from datasets import Dataset

    with open(data_file("transfer/trec.tsv"), encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r["split"] == "train"][:96]
    dataset = Dataset.from_dict({"text": [r["text"] for r in rows], "label": [int(r["label"]) for r in rows]})
    settings = TrainSettings(
        output_dir=str(tmp_path / "run"), batch_size=32, max_steps=12, learning_rate=1e-3, warmup_ratio=0.0, seed=0
    )
    result = train(tiny_model, SupConLoss(tiny_model, temperature=0.3), dataset, settings)
    assert result.steps == 12 and result.seconds > 0
    losses = [row["loss"] for row in result.log_history if "loss" in row]
    assert len(losses) == 12 and sum(losses[-3:]) < sum(losses[:3])
    assert result.summary()["last_log"]["step"] == 12
    with pytest.raises(TypeError):
        train(tiny_model, SupConLoss(tiny_model), dataset, settings, "positional collator")
