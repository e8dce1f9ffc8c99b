"""``st-contrastive push RUN_DIR --repo-id USER/NAME``: publish a finished run to the Hugging Face Hub.

    st-contrastive push runs/declutr-small --repo-id me/declutr-small-wiki
    st-contrastive push runs/declutr-small --repo-id me/declutr-small-wiki --dry-run   # only write the folder

The upload is RUN_DIR/hub-upload: the model, its results.json and plots, and the run's model card (README.md, which
every run folder gets when the run is written; rewritten here to name --repo-id) stating the method, the loss
configuration, the paper's citation, the training data and the run's evaluation table, with the base model, data,
license and scores as Hub metadata. Trainer checkpoints are left out. Log in first (`hf auth login`) or pass --token.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from st_contrastive.commands import options
from st_contrastive.commands.options import OUTPUT, option


def check_push(repo_id: str | None) -> None:
    """A recipe's ``--push-to-hub`` repository id, checked before any training (nothing to check without one)."""
    if repo_id:
        from st_contrastive.publishing import check_repo_id  # here: publishing imports huggingface_hub

        check_repo_id(repo_id)


def publish(run_dir, repo_id: str | None) -> None:
    """What a recipe does with ``--push-to-hub`` when its run is written: upload it (nothing without a repo id)."""
    if not repo_id:
        return
    from st_contrastive.publishing import push

    try:
        url = push(run_dir, repo_id)
    except Exception as error:  # a Hub error of any kind: the run itself is safe, say how to retry
        raise OSError(
            f"the run is saved in {run_dir}, but publishing it to {repo_id} failed ({error}); retry with "
            f"`st-contrastive push {run_dir} --repo-id {repo_id}`"
        ) from error
    print(f"Published {run_dir} as https://huggingface.co/{repo_id} ({url})")


@dataclass
class PushConfig:
    """``st-contrastive push RUN_DIR``'s options, each field the option of the same name."""

    run_dir: str = option(positional=True, metavar="RUN_DIR", help="a command's output folder (with results.json)")
    repo_id: str = option(group=OUTPUT, help="Hub repository, USER/NAME or ORG/NAME")
    private: bool = option(False, group=OUTPUT, help="create the repository as private")
    token: str | None = option(None, group=OUTPUT, help="Hub token (unset: the one `hf auth login` stored)")
    dry_run: bool = option(False, group=OUTPUT, help="write RUN_DIR/hub-upload and its card, upload nothing")


def build_parser() -> argparse.ArgumentParser:
    return options.build_parser(PushConfig, "st-contrastive push", __doc__)


def check_inputs(args: PushConfig) -> None:
    """RUN_DIR must be a finished run and --repo-id a repository id, before anything loads or is written."""
    from pathlib import Path

    from st_contrastive.commands.input_checks import SettingChecks

    checks = SettingChecks()
    run_dir = Path(args.run_dir)
    if not run_dir.is_dir():
        checks.add("RUN_DIR", args.run_dir, "no such folder")
    else:
        for needed, why in (("modules.json", "a saved SentenceTransformer"), ("results.json", "a finished run")):
            if not (run_dir / needed).exists():
                checks.add("RUN_DIR", args.run_dir, f"has no {needed}: publish {why} (the --output folder of a recipe)")
    from st_contrastive.publishing import check_repo_id

    checks.call("--repo-id", args.repo_id, lambda: check_repo_id(args.repo_id))
    checks.done()


def main(argv: list[str] | None = None) -> str:
    from st_contrastive.publishing import prepare_upload, push

    args = options.config_from_args(PushConfig, build_parser().parse_args(argv))
    check_inputs(args)
    if args.dry_run:
        folder = prepare_upload(args.run_dir, args.repo_id)
        print(f"Wrote {folder} (model card: {folder / 'README.md'}); nothing uploaded (--dry-run).")
        return str(folder)
    url = push(args.run_dir, args.repo_id, private=args.private, token=args.token)
    print(f"Published {args.run_dir} as https://huggingface.co/{args.repo_id} ({url})")
    return url


if __name__ == "__main__":
    main()
