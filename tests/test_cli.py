"""The command line builds every sub-command's help without importing torch, so --help is instant."""

import subprocess
import sys

from st_contrastive.cli import COMMANDS

CHECK = """
import sys
from st_contrastive.cli import main
for command in sys.argv[1:]:
    try:
        main([command, "--help"])
    except SystemExit:
        pass
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers", "datasets", "sklearn") if m in sys.modules)
print("HEAVY", heavy, file=sys.stderr)
"""


def test_every_help_builds_without_torch():
    done = subprocess.run([sys.executable, "-c", CHECK, *COMMANDS], capture_output=True, text=True, timeout=120, check=True)
    assert "HEAVY []" in done.stderr, done.stderr[-2000:]
    assert all(f"st-contrastive {name}" in done.stdout for name in COMMANDS), done.stdout[-2000:]


RUN = """
import sys
from st_contrastive.cli import main
try:
    main(sys.argv[1:])
finally:
    print("TORCH", "torch" in sys.modules, file=sys.stderr)
"""


def run_cli(*argv, cwd):
    return subprocess.run([sys.executable, "-c", RUN, *argv], capture_output=True, text=True, timeout=300, cwd=cwd,
                          check=False)


def test_bad_paths_and_tasks_stop_before_torch_with_one_line(tmp_path):
    done = run_cli("declutr", "--documents", "missing.jsonl", "--output", "out", cwd=tmp_path)
    assert done.returncode == 2  # argparse's status for a bad command line
    assert done.stderr.splitlines()[-1] == "TORCH False"  # printed on the way out, after the error line
    expected = ("st-contrastive declutr: error: --documents missing.jsonl: no such file or folder (expected one of "
                "wiki, books, both, a local path or a Hugging Face Hub id)")
    assert done.stderr.splitlines()[:-1] == [expected]
    assert not (tmp_path / "out").exists()
    done = run_cli("supcon", "--train", "snli-dev+nli.tsv", "--eval-tasks", "sts", cwd=tmp_path)
    assert done.returncode == 2 and "--train nli.tsv: no such file" in done.stderr and "TORCH False" in done.stderr
    done = run_cli("supcon", "--eval-tasks", "stsbtest", cwd=tmp_path)
    assert done.returncode == 2 and "--eval-tasks stsbtest: Unknown task(s) 'stsbtest'" in done.stderr
    assert "TORCH False" in done.stderr


def test_errors_found_in_the_data_name_the_option_and_leave_nothing(tmp_path, tiny_mlm_dir):
    short = tmp_path / "short.jsonl"
    short.write_text('{"text": "a document far too short for two anchors of 512 tokens"}\n')
    argv = ["declutr", "--model", tiny_mlm_dir, "--documents", str(short), "--max-length", "64", "--eval-tasks",
            "--short-documents", "error", "--output", "out"]
    done = run_cli(*argv, cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "--short-documents skip" in done.stderr and "row 0" in done.stderr
    assert not (tmp_path / "out").exists()
    debug = run_cli(*argv, "--debug", cwd=tmp_path)
    assert debug.returncode == 1 and "Traceback" in debug.stderr


def test_each_option_states_its_default_once():
    from st_contrastive.recipes import declutr, pretrain_mlm, supcon_nli
    from st_contrastive.recipes.help_format import DefaultsHelpFormatter

    for recipe in (declutr, supcon_nli, pretrain_mlm):
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
    done = subprocess.run([sys.executable, "-c", RUN, "active", "--output", str(tmp_path / "active")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env, check=False)
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
            "compare them: publish the one you pick with `st-contrastive push OUTPUT/RUN --repo-id USER/NAME`")
        assert "Traceback" not in done.stderr and "TORCH False" in done.stderr and not (tmp_path / "out").exists()
