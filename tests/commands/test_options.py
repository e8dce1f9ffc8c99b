"""Options declared once on the config dataclasses: the generated parsers, their defaults, the library's settings as
options, and one vocabulary across the sub-commands."""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from st_contrastive.arguments import positive
from st_contrastive.commands import options
from st_contrastive.commands.cli import COMMANDS
from st_contrastive.commands.input_checks import SettingError
from st_contrastive.commands.options import EVALUATION, TRAINING, option, same_option


@dataclass
class Inner:
    batch_size: int = option(16, group=TRAINING, help="rows per batch")
    rates: list[float] = option([0.1, 0.2], group=TRAINING, help="one view per rate")


@dataclass
class Outer:
    source: str = option(positional=True, metavar="SOURCE", help="what to read")
    dataset: str = option("wiki", help="the data")
    limit: int | None = option(None, help="at most N rows")
    attention: bool = option(True, flag="--no-attention", help="plain sums")
    resume: bool = option(True, help="continue from the last state")
    mode: str = option("a", choices=("a", "b"), help="a or b")
    tasks: list[str] = option(["sts"], group=EVALUATION, nargs="*", off="--no-eval", help="tasks")
    not_an_option: int = 7
    inner: Inner = field(default_factory=lambda: Inner(batch_size=4))


def parse(argv: list[str]) -> Outer:
    return options.config_from_args(Outer, options.build_parser(Outer, "prog", "test").parse_args(argv))


def test_the_parser_is_the_dataclass():
    assert parse(["x"]) == Outer(source="x")
    config = parse(
        [
            "x",
            "--limit",
            "3",
            "--no-attention",
            "--mode",
            "b",
            "--tasks",
            "a",
            "b",
            "--batch-size",
            "2",
            "--rates",
            "0.5",
        ]
    )
    assert config == Outer(
        source="x", limit=3, attention=False, mode="b", tasks=["a", "b"], inner=Inner(batch_size=2, rates=[0.5])
    )
    assert parse(["x", "--no-eval"]).tasks == []
    # On by default without a flag of its own: both spellings, the positive one a no-op kept for old commands.
    assert (parse(["x"]).resume, parse(["x", "--resume"]).resume, parse(["x", "--no-resume"]).resume) == (
        True,
        True,
        False,
    )
    with pytest.raises(SystemExit):
        parse(["x", "--mode", "c"])


def test_the_enclosing_class_sets_the_nested_defaults_and_each_instance_has_its_own_list():
    assert parse(["x"]).inner.batch_size == 4  # Outer's default, not Inner's 16
    first, second = parse(["x"]), parse(["x"])
    first.tasks.append("more")
    assert second.tasks == ["sts"] and Outer(source="y").tasks == ["sts"]


@dataclass
class LibrarySettings:
    """Settings as the library declares them: a help text and a rule, no flag."""

    temperatures: list[float] = field(default_factory=lambda: [0.1], metadata={"help": "τ of each run"})
    internal: int = 3  # no help text: not an option

    def __post_init__(self) -> None:
        for value in self.temperatures:
            positive("temperatures", value)


@dataclass
class Command:
    settings: LibrarySettings = field(default_factory=LibrarySettings, metadata={"group": "objective"})
    option_flags: ClassVar[dict[str, str]] = {"temperatures": "--temperature"}


def test_a_library_setting_is_an_option_under_the_flag_the_command_gives_it():
    parser = options.build_parser(Command, "prog", "test")
    assert options.config_from_args(Command, parser.parse_args(["--temperature", "0.5", "2"])).settings == (
        LibrarySettings(temperatures=[0.5, 2.0])
    )
    text = parser.format_help()
    assert "objective:" in text and "τ of each run" in text and "--internal" not in text
    assert options.option_of(Command, "temperatures") == "--temperature"


def test_the_library_rule_refuses_a_value_under_the_option_name():
    parser = options.build_parser(Command, "prog", "test")
    with pytest.raises(SettingError) as error:
        options.config_from_args(Command, parser.parse_args(["--temperature", "0.5", "0"]))
    assert error.value.problems == ["--temperature 0: must be above 0"]


def test_help_groups_and_defaults_come_from_the_declaration():
    text = options.build_parser(Outer, "prog", "test").format_help()
    for expected in ("training:", "evaluation:", "--no-attention", "rows per batch (default: 4)", "{a,b}"):
        assert expected in text
    assert "not-an-option" not in text


def test_same_option_reuses_a_declaration_with_its_own_default():
    @dataclass
    class Round:
        batch_size: int = same_option(Inner, "batch_size", 32)

    spec = options.option_spec(dataclasses.fields(Round)[0])
    assert Round().batch_size == 32 and spec["help"] == "rows per batch" and spec["group"] == TRAINING


def command_parsers():
    for name, (function, _) in COMMANDS.items():
        yield name, importlib.import_module(function.__module__).build_parser()


def live_options(parser):
    """flag -> dest of the options a parser reads."""
    return {flag: action.dest for action in parser._actions for flag in action.option_strings}


def test_one_name_per_concept_across_the_commands():
    """A flag fills the same setting in every command that has it, and no retired spelling is read."""
    dest_of: dict[str, set[str]] = {}
    for _, parser in command_parsers():
        for flag, dest in live_options(parser).items():
            dest_of.setdefault(flag, set()).add(dest)
    assert {flag: dests for flag, dests in dest_of.items() if len(dests) > 1} == {}
    for retired in (
        "--documents",
        "--corpus",
        "--train",
        "--max-documents",
        "--limit-documents",
        "--seeds",
        "--weights",
        "--skip-before",
        "--skip-base",
        "--vocabulary-size",
        "--resume",
    ):
        assert retired not in dest_of, retired


# Each command's config class and the arguments it cannot do without.
CONFIGS = {
    "declutr": ("DeCLUTRConfig", {}),
    "declutr-ablation": ("AblationConfig", {"model": "m"}),
    "simcse": ("SimCSEConfig", {}),
    "tsdae": ("TSDAEConfig", {}),
    "ct": ("CTConfig", {}),
    "supcon": ("SupConNLIConfig", {}),
    "chain": ("ChainConfig", {"model": "m"}),
    "supcon-sweep": ("SweepConfig", {}),
    "pretrain-mlm": ("PretrainMLMConfig", {}),
    "multiview": ("MultiViewConfig", {}),
    "active": ("ActiveCommand", {}),
    "evaluate": ("EvaluateConfig", {"model": "m"}),
    "convert": ("ConvertConfig", {"source": "m", "output": "o"}),
    "push": ("PushConfig", {"run_dir": "r", "repo_id": "a/b"}),
    "parse": ("ParseConfig", {}),
    "label": ("LabelConfig", {"run_dir": "r"}),
    "label-studio-backend": ("LabelStudioBackendConfig", {"run_dir": "r"}),
    "label-studio-export": ("LabelStudioExportConfig", {"run_dir": "r", "output": "o.json"}),
}


def test_every_command_has_a_config():
    assert set(CONFIGS) == set(COMMANDS)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_command_parses_its_own_defaults(name):
    """With only its required arguments, each command's parsed config equals its dataclass's defaults: the
    defaults are declared once."""
    module = importlib.import_module(COMMANDS[name][0].__module__)
    class_name, required = CONFIGS[name]
    config_class = getattr(module, class_name)
    argv = []
    for field_name, value in required.items():
        spec = options.option_spec(next(f for f in dataclasses.fields(config_class) if f.name == field_name))
        argv += [value] if spec["positional"] else ["--" + field_name.replace("_", "-"), value]
    parsed = options.config_from_args(config_class, module.build_parser().parse_args(argv))
    assert parsed == config_class(**required)


def test_a_default_derived_after_construction_is_derived_from_the_parsed_options():
    """``active --oracle human`` runs one seed unless told otherwise: the parser's default for --num-seeds is the
    declared None, not the 3 a default instance derives for the simulated oracle."""
    from st_contrastive.commands.active import build_parser, config_from_args

    assert config_from_args(build_parser().parse_args(["--oracle", "human"])).num_seeds == 1
    assert config_from_args(build_parser().parse_args([])).num_seeds == 3
