"""The options several commands share, each declared here once: a command's config class uses these fields.

Their names are the option vocabulary (docs/options.md): one name per concept, sentence-transformers' and
transformers' names where they have one.
"""

from __future__ import annotations

from st_contrastive.commands.options import EVALUATION, MODEL_AND_DATA, OUTPUT, TRAINING, option

DEFAULT_MODEL_HELP = "default all-MiniLM-L6-v2 from the default-model extra"


def model(help: str = f"base model: a local folder or Hub id; {DEFAULT_MODEL_HELP}"):
    return option(None, group=MODEL_AND_DATA, help=help)


def dataset(default: str, help: str):
    """The training data of a command (documents, sentences, NLI pairs or labelled texts: its help says which)."""
    return option(default, group=MODEL_AND_DATA, help=help)


def text_field():
    return option("text", group=MODEL_AND_DATA, help="field of --dataset holding the text")


def max_rows(default: int | None = None, what: str = "rows"):
    return option(
        default,
        group=MODEL_AND_DATA,
        help=f"use only the first N {what} of --dataset (unset: all)",
    )


def output(default: str | None = None, help: str = "output folder"):
    return option(default, group=OUTPUT, help=help)


def name(help: str):
    return option(None, group=OUTPUT, help=help)


def push_to_hub():
    return option(
        None,
        group=OUTPUT,
        metavar="REPO_ID",
        help="publish the run to this Hub repository when it ends, "
        "with its model card (also later: st-contrastive push OUTPUT --repo-id REPO_ID)",
    )


def matryoshka_dims():
    return option(
        None,
        group=TRAINING,
        nargs="+",
        type=int,
        metavar="DIM",
        help="train with sentence-transformers' "
        "MatryoshkaLoss at these embedding sizes (the model's own first, e.g. 384 128 64) so the embeddings "
        "can be truncated to them, and evaluate at each (default: off)",
    )


def matryoshka_weights():
    return option(
        None,
        group=TRAINING,
        nargs="+",
        type=float,
        metavar="W",
        help="weight of each --matryoshka-dims "
        "size in the loss, in the same order (default: 1 each, as sentence-transformers); more weight on "
        "the small sizes favours the truncated embeddings",
    )


def eval_tasks(default: list[str], when: str = "before and after training"):
    return option(
        default,
        group=EVALUATION,
        nargs="*",
        off="--no-eval",
        off_help="evaluate nothing",
        help=f"tasks evaluated {when} (see `st-contrastive evaluate --help`)",
    )


def eval_batch_size(default: int = 64):
    return option(default, group=EVALUATION, help="batch size for encoding evaluation data")


def eval_max_rows():
    return option(
        None, group=EVALUATION, help="evaluate on at most N rows of each task (quick checks only; unset: all)"
    )


def no_base_eval():
    return option(False, group=EVALUATION, help="do not evaluate the base model")


def evaluation_line(tasks: list[str], when: str = "before and after training") -> str:
    """What a command is about to evaluate, said when it starts: the default evaluation takes minutes."""
    if not tasks:
        return "no evaluation (--no-eval; --eval-tasks chooses tasks)"
    return f"evaluating {' '.join(tasks)} {when} (--eval-tasks chooses, --no-eval skips)"


# The servers over an active-learning run (the labelling page, Label Studio's backend): on this machine by default.
LOCALHOST = "127.0.0.1"


def human_run():
    return option(
        positional=True, metavar="RUN_DIR", help="the --output folder of `st-contrastive active --oracle human`"
    )


def serving_host(elsewhere: str):
    """Where a server listens; ``elsewhere`` says who reaches it from another machine with 0.0.0.0."""
    return option(
        LOCALHOST,
        help=f"address to serve on (0.0.0.0: every address of this machine, {elsewhere}); every request needs the "
        "access token in the URL it prints",
    )
