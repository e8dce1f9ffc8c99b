"""The ``st-contrastive`` command: one sub-command per recipe."""

from __future__ import annotations

import logging
import os
import shlex
import sys

from st_contrastive.commands import (
    active,
    chain,
    convert,
    ct,
    declutr,
    declutr_ablation,
    evaluate,
    label,
    label_studio_backend,
    label_studio_export,
    multiview,
    options,
    parse,
    pretrain_mlm,
    push,
    simcse,
    supcon,
    supcon_sweep,
    tsdae,
)
from st_contrastive.commands.input_checks import SettingError
from st_contrastive.commands.library_messages import options_by_argument, said_as_options
from st_contrastive.distributed import is_distributed

COMMANDS = {
    "declutr": (declutr.main, "DeCLUTR continued training with evaluation before and after"),
    "declutr-ablation": (
        declutr_ablation.main,
        "DeCLUTR objective ablation (Fig. 3) and ST's unsupervised methods, at equal steps or time",
    ),
    "simcse": (simcse.main, "unsupervised SimCSE with sentence-transformers' loss (DeCLUTR's control)"),
    "tsdae": (tsdae.main, "TSDAE with sentence-transformers' denoising auto-encoder loss"),
    "ct": (ct.main, "Contrastive Tension (in-batch negatives) with sentence-transformers' loss"),
    "supcon": (supcon.main, "supervised contrastive + cross-entropy training on NLI"),
    "chain": (chain.main, "base -> DeCLUTR -> SupCon + CE against each stage alone (beyond the papers)"),
    "supcon-sweep": (supcon_sweep.main, "CE-only vs SupCon + CE over λ and candidates (Tables 2-3)"),
    "pretrain-mlm": (pretrain_mlm.main, "pretrain a small BERT with MLM (a base for DeCLUTR)"),
    "multiview": (multiview.main, "multi-view structured encoders (Tree-LSTMs, bi-GRU) on context prediction"),
    "active": (active.main, "SCALe active learning: acquire, label (simulated or by hand), retrain"),
    "label": (label.main, "label an active-learning run (--oracle human) in the browser, round after round"),
    "label-studio-backend": (
        label_studio_backend.main,
        "SCALe as the model of a Label Studio project: it orders the texts to label and trains on the labels",
    ),
    "label-studio-export": (label_studio_export.main, "an active-learning run as Label Studio tasks to import"),
    "evaluate": (evaluate.main, "STS and SentEval-style transfer evaluation of a model"),
    "convert": (convert.main, "a transformers checkpoint (e.g. johngiorgi/declutr-small) as a mean-pooled ST model"),
    "push": (push.main, "publish a finished run to the Hugging Face Hub with its model card"),
    "parse": (parse.main, "parse a corpus once into a resumable cache of parsed sentences (spaCy or stanza)"),
}


# Commands that train with DDP under torchrun / accelerate launch (rank 0 evaluates and writes): all but these,
# which run in one process: evaluate, parse, convert and push do not train, and the active-learning loop (with its
# labelling page) stops between rounds for a person.
ONE_PROCESS = ("active", "label", "label-studio-backend", "label-studio-export", "evaluate", "convert", "push", "parse")
DISTRIBUTED_COMMANDS = tuple(name for name in COMMANDS if name not in ONE_PROCESS)


def usage() -> str:
    lines = [
        "usage: st-contrastive COMMAND [options] [--debug]   (st-contrastive COMMAND --help for its options)",
        "",
        "commands:",
    ]
    lines += [f"  {name:<22}{summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", "--debug (or ST_CONTRASTIVE_DEBUG=1) shows the traceback of an error instead of its one line."]
    return "\n".join(lines)


# How each command continues after Ctrl-C: the same command line resumed from the run folder, or rerun.
RESUME_OPTION = {
    name: "--resume-from-checkpoint" for name in ("declutr", "simcse", "tsdae", "ct", "supcon", "multiview")
}
RERUN_COMMANDS = ("declutr-ablation", "supcon-sweep", "chain")  # they reuse finished runs and resume the interrupted


class CommandLineExit(SystemExit):
    """Exit with ``status`` once ``message`` is printed; ``str()`` is the message, for callers in Python."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(status)
        self.message = message

    def __str__(self) -> str:
        return self.message


def fail(message: str, status: int) -> None:
    print(message, file=sys.stderr)
    raise CommandLineExit(message, status)


def resume_hint(command: str, argv: list[str], interrupted) -> str:
    """What to run to continue after Ctrl-C: ``argv`` without the options that would start over."""
    kept, skip = [], False
    for arg in argv:
        if skip and not arg.startswith("-"):  # the value of --resume-from-checkpoint (pretrain-mlm's may have none)
            skip = False
            continue
        skip = arg == "--resume-from-checkpoint"
        if not skip and arg not in ("--overwrite", "--rerun") and not arg.startswith("--resume-from-checkpoint="):
            kept.append(arg)
    if command == "active":
        from st_contrastive.commands.active import ActiveCommand, build_parser

        args, _ = build_parser().parse_known_args(argv)
        run = options.config_from_args(ActiveCommand, args)
        folder = run.resume_from_checkpoint or run.experiment.output
        return f"st-contrastive active --resume-from-checkpoint {shlex.quote(folder)}"
    if command in RESUME_OPTION:
        kept += [RESUME_OPTION[command], str(interrupted.run)]
    elif command == "pretrain-mlm":
        kept.append("--resume-from-checkpoint")
    line = shlex.join(["st-contrastive", command, *kept])
    return f"rerun {line} (finished runs are reused)" if command in RERUN_COMMANDS else line


def interrupted_line(command: str, argv: list[str], error: KeyboardInterrupt) -> str:
    step = getattr(error, "step", None)
    if step is None:  # Ctrl-C outside training (loading, evaluating): nothing was saved to resume from
        return f"st-contrastive {command}: interrupted"
    if getattr(error, "checkpoint", None) is None:
        return f"st-contrastive {command}: interrupted at step {step}, before any checkpoint; rerun the command to start over"
    if error.resume_step != step:  # a second Ctrl-C interrupted the step: resume from the last checkpoint
        step = f"{step} (the last checkpoint is of step {error.resume_step})"
    return f"st-contrastive {command}: interrupted at step {step}; resume with {resume_hint(command, argv, error)}"


def main(argv: list[str] | None = None) -> None:
    """Run a sub-command. Bad settings (a :class:`SettingError`, found from the arguments before anything loads)
    end the run with one line each, as argparse's, and exit status 2. Bad input found later (a ``ValueError`` or
    ``OSError``, which name the item and the option to change) ends it with one line and exit status 1. Ctrl-C
    ends it with one line saying how to resume, exit status 130. ``--debug`` or ``ST_CONTRASTIVE_DEBUG=1`` shows
    the traceback instead."""
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv or os.environ.get("ST_CONTRASTIVE_DEBUG", "") not in ("", "0")
    argv = [arg for arg in argv if arg != "--debug"]
    if not argv or argv[0] in {"-h", "--help"}:
        print(usage())
        return
    if argv[0] not in COMMANDS:
        sys.exit(f"st-contrastive: unknown command {argv[0]!r}\n\n{usage()}")
    run, _ = COMMANDS[argv[0]]
    if is_distributed() and argv[0] not in DISTRIBUTED_COMMANDS:
        sys.exit(
            f"st-contrastive {argv[0]}: error: runs in one process; launch it without torchrun/accelerate "
            f"(these train on several: {', '.join(DISTRIBUTED_COMMANDS)})"
        )
    # Every command reports as it goes (what it evaluates, how much data, where it saved) through logging.
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    argument_options = options_by_argument(sys.modules[run.__module__])
    make_record = logging.getLogRecordFactory()

    def record_with_options(*args, **kwargs) -> logging.LogRecord:
        """The library's warnings name its arguments; the person at the command line reads the options."""
        record = make_record(*args, **kwargs)
        if argument_options and record.name.startswith("st_contrastive."):
            record.msg, record.args = said_as_options(record.getMessage(), argument_options), ()
        return record

    logging.setLogRecordFactory(record_with_options)
    try:
        run(argv[1:])
    except SettingError as error:
        if debug:
            raise
        problems = (said_as_options(problem, argument_options) for problem in error.problems)
        fail("\n".join(f"st-contrastive {argv[0]}: error: {problem}" for problem in problems), 2)
    except KeyboardInterrupt as error:
        if debug:
            raise
        fail(interrupted_line(argv[0], argv[1:], error), 130)
    except (ValueError, OSError) as error:
        if debug:
            raise
        message = said_as_options(str(error), argument_options)
        sys.exit(f"st-contrastive {argv[0]}: error: {message}  (--debug shows the traceback)")
    finally:
        logging.setLogRecordFactory(make_record)


if __name__ == "__main__":
    main()
