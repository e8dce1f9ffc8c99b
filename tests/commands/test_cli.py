"""The command line builds every sub-command's help without importing torch, so --help is instant."""

import subprocess
import sys

import pytest

from st_contrastive.commands.cli import COMMANDS, main

CHECK = """
import sys

import pytest
from st_contrastive.commands.cli import main
for command in sys.argv[1:]:
    try:
        main([command, "--help"])
    except SystemExit:
        pass
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers", "datasets", "sklearn") if m in sys.modules)
print("HEAVY", heavy, file=sys.stderr)
"""


def test_every_help_builds_without_torch():
    done = subprocess.run(
        [sys.executable, "-c", CHECK, *COMMANDS], capture_output=True, text=True, timeout=120, check=True
    )
    assert "HEAVY []" in done.stderr, done.stderr[-2000:]
    assert all(f"st-contrastive {name}" in done.stdout for name in COMMANDS), done.stdout[-2000:]


RUN = """
import sys

import pytest
from st_contrastive.commands.cli import main
try:
    main(sys.argv[1:])
finally:
    print("TORCH", "torch" in sys.modules, file=sys.stderr)
"""


def run_cli(*argv, cwd):
    return subprocess.run(
        [sys.executable, "-c", RUN, *argv], capture_output=True, text=True, timeout=300, cwd=cwd, check=False
    )


def test_bad_paths_and_tasks_stop_before_torch_with_one_line(tmp_path):
    done = run_cli("declutr", "--dataset", "missing.jsonl", "--output", "out", cwd=tmp_path)
    assert done.returncode == 2  # argparse's status for a bad command line
    assert done.stderr.splitlines()[-1] == "TORCH False"  # printed on the way out, after the error line
    expected = (
        "st-contrastive declutr: error: --dataset missing.jsonl: no such file or folder (expected one of "
        "wiki, books, both, a local path or a Hugging Face Hub id)"
    )
    assert done.stderr.splitlines()[:-1] == [expected]
    assert not (tmp_path / "out").exists()
    done = run_cli("supcon", "--dataset", "snli-dev+nli.tsv", "--eval-tasks", "sts", cwd=tmp_path)
    assert done.returncode == 2 and "--dataset nli.tsv: no such file" in done.stderr and "TORCH False" in done.stderr
    done = run_cli("supcon", "--eval-tasks", "stsbtest", cwd=tmp_path)
    assert done.returncode == 2 and "--eval-tasks stsbtest: Unknown task(s) 'stsbtest'" in done.stderr
    assert "TORCH False" in done.stderr


def test_errors_found_in_the_data_name_the_option_and_leave_nothing(tmp_path, tiny_mlm_dir, monkeypatch):
    """In this process: ``SystemExit`` with a message is what Python prints as that one line (exit status 1, no
    traceback), and an exception that leaves ``main`` is what it prints as a traceback."""
    monkeypatch.chdir(tmp_path)
    short = tmp_path / "short.jsonl"
    short.write_text('{"text": "a document far too short for two anchors of 512 tokens"}\n')
    argv = [
        "declutr",
        "--model",
        tiny_mlm_dir,
        "--dataset",
        str(short),
        "--max-span-length",
        "64",
        "--eval-tasks",
        "--short-documents",
        "error",
        "--output",
        "out",
    ]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    message = exit_info.value.code
    assert isinstance(message, str) and message.count("\n") == 0, message
    assert "--short-documents skip" in message and "row 0" in message
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="short_documents='skip'"):  # the library's own words, as Python says them
        main([*argv, "--debug"])


@pytest.mark.parametrize(
    ("command", "rows", "said"),
    [
        (  # the library's "dataset='…' gave 1 sentences, fewer than one batch (batch_size=64)"
            ["simcse", "--batch-size", "64", "--eval-tasks"],
            ['{"text": "One sentence of a document with four words or more."}'],
            "gave 1 sentences, fewer than one batch (--batch-size 64): pass more documents or a smaller batch",
        ),
        (  # the library's "found the labels ['a']; a classifier needs at least two (name them with `label_names`)"
            ["active", "--num-seeds", "1"],
            ['{"text": "a first text", "label": "a"}', '{"text": "a second text", "label": "a"}'],
            "found the labels ['a']; a classifier needs at least two (name them with --label-names)",
        ),
    ],
    ids=["simcse", "active"],
)
def test_a_data_error_found_mid_run_names_the_options(command, rows, said, tmp_path, tiny_mlm_dir, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data.jsonl").write_text("\n".join(rows) + "\n")
    argv = [*command, "--model", tiny_mlm_dir, "--dataset", "data.jsonl", "--output", "out"]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    message = exit_info.value.code
    assert isinstance(message, str) and message.count("\n") == 0, message
    assert said in message and "=" not in message.split("error: ")[1], message


def test_each_option_states_its_default_once():
    from st_contrastive.commands import declutr, pretrain_mlm, supcon
    from st_contrastive.commands.options import DefaultsHelpFormatter

    for recipe in (declutr, supcon, pretrain_mlm):
        parser = recipe.build_parser()
        formatter = DefaultsHelpFormatter(parser.prog)
        for action in parser._actions:
            text = formatter._get_help_string(action)
            assert "(default: None)" not in text, (parser.prog, text)
            if "(default: " in text:  # appended only where the help did not already say it
                assert text.replace("%(default)s", "").lower().count("default") == 1, (parser.prog, text)


def test_single_process_commands_refuse_a_distributed_launch(tmp_path):
    import os

    env = os.environ | {"WORLD_SIZE": "2", "RANK": "0"}
    done = subprocess.run(
        [sys.executable, "-c", RUN, "active", "--output", str(tmp_path / "active")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
        check=False,
    )
    assert done.returncode == 1
    assert "runs in one process; launch it without torchrun/accelerate" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "active").exists()


def test_comparisons_refuse_push_to_hub_before_training(tmp_path):
    """An ablation, a sweep or a chain would publish each of its runs to the one repository."""
    for command in ("declutr-ablation", "supcon-sweep", "chain"):
        done = run_cli(command, "--model", "base", "--output", "out", "--push-to-hub", "me/model", cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.splitlines()[-2] == (
            f"st-contrastive {command}: error: --push-to-hub publishes one run, and this command trains several to "
            "compare them: publish the one you pick with `st-contrastive push OUTPUT/RUN --repo-id USER/NAME`"
        )
        assert "Traceback" not in done.stderr and "TORCH False" in done.stderr and not (tmp_path / "out").exists()


# One old spelling per case: (command, old argv, new argv, the new option its warning names). The options of a
# comparison that are passed on to declutr or supcon are parsed as the comparison passes them on.


def parsed_config(command: str, argv: list[str]):
    """The config(s) ``st-contrastive COMMAND argv`` runs with, parsed as the command parses them (nothing runs)."""
    import importlib

    from st_contrastive.commands import options
    from st_contrastive.commands.cli import COMMANDS

    (
        chain,
        declutr,
        declutr_ablation,
        evaluate,
        multiview,
        parse,
        pretrain_mlm,
        active,
        simcse,
        supcon,
        supcon_sweep,
    ) = (
        importlib.import_module(COMMANDS[name][0].__module__)
        for name in (
            "chain",
            "declutr",
            "declutr-ablation",
            "evaluate",
            "multiview",
            "parse",
            "pretrain-mlm",
            "active",
            "simcse",
            "supcon",
            "supcon-sweep",
        )
    )

    direct = {
        "declutr": (declutr, declutr.DeCLUTRConfig),
        "simcse": (simcse, simcse.SimCSEConfig),
        "supcon": (supcon, supcon.SupConNLIConfig),
        "multiview": (multiview, multiview.MultiViewConfig),
        "pretrain-mlm": (pretrain_mlm, pretrain_mlm.PretrainMLMConfig),
        "active": (active, active.ActiveCommand),
        "evaluate": (evaluate, evaluate.EvaluateConfig),
    }
    passed_on = {
        "declutr-ablation": (declutr_ablation, declutr_ablation.AblationConfig, declutr, declutr.DeCLUTRConfig),
        "chain": (chain, chain.ChainConfig, declutr, declutr.DeCLUTRConfig),
        "supcon-sweep": (supcon_sweep, supcon_sweep.SweepConfig, supcon, supcon.SupConNLIConfig),
    }
    if command == "parse":
        return options.config_from_args(parse.ParseConfig, parse.build_parser().parse_args(argv))
    if command in direct:
        module, config_class = direct[command]
        return options.config_from_args(config_class, module.build_parser().parse_args(argv))
    module, config_class, inner, inner_class = passed_on[command]
    parser = module.build_parser()
    own, rest = parser.parse_known_args(argv)
    return (
        options.config_from_args(config_class, own),
        options.config_passed_on(inner_class, inner.build_parser(), rest, parser.prog),
    )


@pytest.mark.parametrize(
    "command", ["declutr", "declutr-ablation", "chain", "simcse", "supcon", "supcon-sweep", "multiview"]
)
def test_no_eval_is_an_empty_eval_tasks(command, capsys):
    model = ["--model", "m"] if command in ("declutr-ablation", "chain") else []
    assert parsed_config(command, [*model, "--no-eval"]) == parsed_config(command, [*model, "--eval-tasks"])
    config = parsed_config(command, [*model, "--no-eval"])
    assert (config[0] if isinstance(config, tuple) else config).eval_tasks == []
    assert capsys.readouterr().err == ""
