"""The docs-example tier: every bash and python block of the README and docs/ runs, in one process, offline.

``make test-docs`` (a CI step of its own) runs it; ``make test`` leaves it out. How blocks relate and how they are
shrunk is in ``tests/docs_examples.py``. What stands in for the outside world, and only that:
- Hub model ids resolve through a Hugging Face cache (the real layout, read by the real loading code) that holds
  all-MiniLM-L6-v2 for ``sentence-transformers/all-MiniLM-L6-v2`` and a tiny masked LM for
  ``johngiorgi/declutr-small``;
- the Hub's two upload calls (create the repository, upload the folder) are recorded instead of sent;
- ``torchrun`` and ``accelerate launch`` lines: the launcher's own parser reads its options, and the command runs
  in this process (tests/commands/test_launchers.py launches real ranks);
- ``make main`` runs the command that `make -n main` prints; other make targets are dry-run (each is a CI step);
- ``python recipes/NAME.py`` lines: the script runs in this process (``runpy``, its argv capped like a command's);
- the person in the active-learning loop: label files are filled with the gold labels of the file they wrote, and
  in the labelling page (``st-contrastive label``, served by its own process on a free port) one round is labelled
  the same way over HTTP, then the server is stopped;
- Label Studio, which calls the SCALe backend (``st-contrastive label-studio-backend``): the backend runs as its own
  process on a free port and answers a health check with the run's model version, then it is stopped; a project's
  export (``export.json``) is the user's tickets as Label Studio exports them, two of each class annotated.
"""

from __future__ import annotations

import inspect
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from docs_examples import CAPS, ROOT, Example, chains, commands, examples, shrink
from support_tickets import SUPPORT, fill, write_support_csv

pytestmark = pytest.mark.docs

CHAINS = chains(examples())
STEP_CAP, BATCH_CAP, ROWS_CAP, DOCUMENTS_CAP = 2, 8, 40, 8


@pytest.fixture(scope="module")
def tier(tmp_path_factory):
    """The folders examples run in, the Python names each one left, and the stand-ins listed above."""
    from st_contrastive.default_model import default_model

    root = tmp_path_factory.mktemp("docs-examples")
    cache = root / "hf-cache"
    hub_model(cache, "sentence-transformers/all-MiniLM-L6-v2", Path(default_model()))
    hub_model(cache, "johngiorgi/declutr-small", tiny_masked_lm(root / "tiny-masked-lm", Path(default_model())))
    uploads = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(cache))
        patch.setattr("huggingface_hub.HfApi.create_repo", lambda self, repo_id, **_: SimpleNamespace(repo_id=repo_id))
        patch.setattr(
            "huggingface_hub.HfApi.upload_folder",
            lambda self, repo_id, folder_path, **_: (
                uploads.append(repo_id) or SimpleNamespace(commit_url=f"https://huggingface.co/{repo_id}/commit/0")
            ),
        )
        cap_python_examples(patch)
        yield SimpleNamespace(root=root, folders={}, names={}, uploads=uploads, model=default_model())


def hub_model(cache: Path, repo_id: str, folder: Path) -> None:
    """``folder`` as the one snapshot of ``repo_id`` in a Hugging Face cache (refs/main names it)."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / ("0" * 40)
    shutil.copytree(folder, snapshot, symlinks=False)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("0" * 40)


def tiny_masked_lm(folder: Path, tokenizer_source: Path) -> Path:
    """A one-layer BertForMaskedLM with random weights and all-MiniLM-L6-v2's tokenizer: what `convert` reads."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_source))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def cap_python_examples(patch: pytest.MonkeyPatch) -> None:
    """The caps of the command lines, where a Python block meets them: trainer steps and batch, corpus documents
    (read or parsed) and NLI rows, evaluation rows."""
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    from st_contrastive import data, evaluation, parsing

    init = SentenceTransformerTrainingArguments.__init__

    def capped_init(self, *args, **kwargs):
        kwargs["max_steps"] = STEP_CAP
        kwargs["per_device_train_batch_size"] = min(kwargs.get("per_device_train_batch_size", 8), BATCH_CAP)
        init(self, *args, **kwargs)

    patch.setattr(SentenceTransformerTrainingArguments, "__init__", capped_init)
    for name, option in (("load_corpus", "limit"), ("load_documents", "limit"), ("load_nli", "max_rows")):
        patch.setattr(data, name, capped(getattr(data, name), option, DOCUMENTS_CAP if option == "limit" else 64))
    patch.setattr(evaluation, "evaluate_model", capped(evaluation.evaluate_model, "max_rows", ROWS_CAP))
    patch.setattr(parsing, "parse_corpus", capped(parsing.parse_corpus, "limit_documents", DOCUMENTS_CAP))


def capped(function, option: str, cap: int):
    """``function`` with its argument ``option`` (given by keyword or position) at most ``cap``."""
    signature = inspect.signature(function)

    def call(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.arguments[option] = min(bound.arguments.get(option) or cap, cap)
        return function(*bound.args, **bound.kwargs)

    return call


def prepare_folder(folder: Path, sources: list[Path]) -> None:
    """``folder`` holding what the ``sources`` folders wrote: their entries linked, ``runs/`` merged one level down."""
    folder.mkdir(parents=True)
    for source in sources:
        for entry in source.iterdir():
            if entry.name == "runs":
                (folder / "runs").mkdir(exist_ok=True)
                for run in entry.iterdir():
                    if not (folder / "runs" / run.name).exists():
                        (folder / "runs" / run.name).symlink_to(run.resolve())
            elif not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry.resolve())


# An example runs in the same test as the examples it needs and those that need it, so each runs once and a
# chain stays on one pytest-xdist worker; unrelated chains run beside it.
@pytest.mark.parametrize("chain", CHAINS, ids=[chain[0].name for chain in CHAINS])
def test_examples_run_as_written(chain: list[Example], tier, monkeypatch):
    for example in chain:
        print(f"--- {example.name}: {example.path.name} line {example.line}")  # shown with a failure
        run_example(example, tier, monkeypatch)


def run_example(example: Example, tier, monkeypatch) -> None:
    """Run ``example`` in its folder: a new one holding what the examples it comes after wrote, or the folder and
    the Python names of the block it continues."""
    continues = example.options.get("continues")
    if continues:
        folder, names = tier.folders[continues], dict(tier.names[continues])
    else:
        folder, names = tier.root / f"example-{len(tier.folders)}", {"__name__": "__docs_example__"}
        prepare_folder(folder, [tier.folders[name] for name in example.after])
    tier.folders[example.name] = folder
    monkeypatch.chdir(folder)
    if example.language == "python":
        exec(compile(example.code, f"{example.path.name}:{example.line}", "exec"), names)  # noqa: S102 (the point)
        tier.names[example.name] = names
        return
    for k, argv in enumerate(commands(example.code)):
        if "alternatives" in example.options:  # each alternative from the block's starting folder
            where = tier.root / f"{folder.name}-alternative-{k}"
            prepare_folder(where, [folder])
            monkeypatch.chdir(where)
        run_command(argv, tier)


def run_command(argv: list[str], tier) -> None:
    program = argv[0]
    if program == "st-contrastive":
        return run_cli(argv[1:], tier)
    if program == "torchrun":
        from torch.distributed.run import get_args_parser

        launch = get_args_parser().parse_args(argv[1:])
        assert launch.no_python and launch.training_script == "st-contrastive", argv  # the entry point itself
        return run_cli(launch.training_script_args, tier)
    if argv[:2] == ["accelerate", "launch"]:
        from accelerate.commands.launch import launch_command_parser

        launch = launch_command_parser().parse_args(argv[2:])
        assert launch.no_python and launch.training_script == "st-contrastive", argv
        return run_cli(launch.training_script_args, tier)
    if argv[:2] == ["python", "-c"]:
        return exec(argv[2], {"__name__": "__main__"})  # noqa: S102
    if program == "python" and len(argv) > 1 and argv[1].startswith("recipes/"):
        return run_script(argv[1:], tier)
    if argv[:2] == ["make", "main"]:  # the command `make main` runs, shrunk like any other
        printed = subprocess.run(["make", "-n", "-B", *argv[1:]], cwd=ROOT, capture_output=True, text=True, check=True)
        (line,) = [line for line in commands(printed.stdout) if line[0].endswith("bin/st-contrastive")]
        return run_cli(line[1:], tier)
    if program == "make":  # every other target is a CI step or a tool of its own: it must exist
        subprocess.run(["make", "-n", *argv[1:]], cwd=ROOT, capture_output=True, check=True)
        return None
    pytest.fail(f"the docs run {program!r}, which this tier does not know how to run: {' '.join(argv)}")


def run_cli(argv: list[str], tier) -> None:
    from st_contrastive.commands.cli import main

    if argv[0] == "label" and not {"-h", "--help"} & set(argv):  # a server: a round is labelled in it, then it stops
        return label_in_the_page(argv)
    if argv[0] == "label-studio-backend" and not {"-h", "--help"} & set(argv):  # a server Label Studio calls
        return backend_answers(argv)
    if argv[0] == "active" and "--resume-from-checkpoint" in argv:  # the person labels the last round's queries
        answer_queries(Path(argv[argv.index("--resume-from-checkpoint") + 1]))
    for word in argv:
        if word == "my_texts.csv" and not Path(word).exists():
            write_support_csv(Path(word), labelled_per_class=2)
        if word == LABEL_STUDIO_EXPORT and not Path(word).exists():
            write_label_studio_export(Path(word))
    uploads = len(tier.uploads)
    try:
        main(shrink(argv, tier.model))
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            pytest.fail(f"st-contrastive {' '.join(argv)} exited {exit_.code}: {exit_}")
    # A publishing line reaches the upload (active publishes only once its budget is reached).
    publishing = (argv[0] == "push" and not {"--dry-run", "--help"} & set(argv)) or "--push-to-hub" in argv
    if publishing and argv[0] != "active":
        assert len(tier.uploads) == uploads + 1, f"st-contrastive {' '.join(argv)} uploaded nothing"


def run_script(argv: list[str], tier) -> None:
    """``python recipes/NAME.py ...`` from the checkout, in this process, with its options capped (``CAPS`` has a row
    per script: one without a row would run at the paper's size)."""
    script = ROOT / argv[0]
    if argv[0] not in CAPS or not script.is_file():
        pytest.fail(
            f"the docs run python {argv[0]}, which this tier does not know how to run (no such script, or no "
            f"row for it in CAPS, tests/docs_examples.py): python {' '.join(argv)}"
        )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "argv", [str(script), *shrink(argv, tier.model)[1:]])
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exit_:
            if exit_.code not in (0, None):
                pytest.fail(f"python {' '.join(argv)} exited {exit_.code}: {exit_}")


def label_in_the_page(argv: list[str]) -> None:
    """``st-contrastive label RUN_DIR`` as its own process on a free port (the example's port may be taken): the
    person labels the round's queries with the gold labels of the user's file, the next round (or the end of the
    budget) must come, then the server is stopped."""
    from labelling_server import Server

    gold = {text: label for label, texts in SUPPORT.items() for text in texts}
    server = Server(argv[1], gold)
    try:
        status = server.label_round()
        assert status["phase"] in ("labelling", "done") and not status["error"], status
        assert status["phase"] == "done" or status["item"] is not None, status
    finally:
        server.kill()


def backend_answers(argv: list[str]) -> None:
    """``st-contrastive label-studio-backend RUN_DIR`` as its own process on a free port: it prints the URL to paste
    into Label Studio and answers Label Studio's health check there with the run's model version, then it is
    stopped. (Label Studio itself is not in this venv: tests/active/test_label_studio.py drives the real one.)"""
    from label_studio_server import Backend

    options = argv[2:]
    if "--port" in options:  # its own free port instead of the example's
        at = options.index("--port")
        options = options[:at] + options[at + 2 :]
    backend = Backend(argv[1], Path("label-studio-backend.log"), tuple(options))
    try:
        backend.start()
        health = backend.health()
        assert health["status"] == "UP" and health["model_version"].startswith("round-"), health
    finally:
        backend.kill()


# A Label Studio project's JSON export, as the docs name it: the user's tickets, two of each class annotated.
LABEL_STUDIO_EXPORT = "export.json"


def write_label_studio_export(path: Path) -> None:
    """The support tickets as Label Studio exports a text-classification project (Export > JSON): each task with its
    id, its data and its annotations (the first two tickets of each class labelled); tests/active/test_label_studio.py
    reads the real Label Studio's export the same way."""
    import json

    from st_contrastive.data.label_studio import FROM_NAME, TO_NAME, choices_result

    tasks = []
    for label, texts in SUPPORT.items():
        for k, text in enumerate(texts):
            annotated = k < 2
            tasks.append(
                {
                    "id": len(tasks) + 1,
                    "data": {"text": text},
                    "annotations": [
                        {
                            "id": len(tasks) + 1,
                            "result": choices_result(label, from_name=FROM_NAME, to_name=TO_NAME),
                            "was_cancelled": False,
                        }
                    ]
                    if annotated
                    else [],
                    "predictions": [],
                }
            )
    path.write_text(json.dumps(tasks, indent=1))


def answer_queries(run: Path) -> None:
    """The person: the latest queries file of each arm labelled with the gold labels of the user's file."""
    gold = {text: label for label, texts in SUPPORT.items() for text in texts}
    for arm in run.glob("arms/*"):
        fill(max(arm.glob("queries-round-*.csv")), gold)
