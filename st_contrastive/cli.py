"""The ``st-contrastive`` command: one sub-command per recipe."""

from __future__ import annotations

import importlib
import sys

COMMANDS = {
    "declutr": ("st_contrastive.recipes.declutr", "DeCLUTR continued training with evaluation before and after"),
    "declutr-ablation": ("st_contrastive.recipes.declutr_ablation", "DeCLUTR objective ablation at equal steps (Fig. 3)"),
    "supcon": ("st_contrastive.recipes.supcon_nli", "supervised contrastive + cross-entropy training on NLI"),
    "supcon-sweep": ("st_contrastive.recipes.supcon_nli_sweep", "CE-only vs SupCon + CE over λ and candidates (Tables 2-3)"),
    "pretrain-mlm": ("st_contrastive.recipes.pretrain_mlm", "pretrain a small BERT with MLM (a base for DeCLUTR)"),
    "evaluate": ("st_contrastive.recipes.evaluate", "STS and SentEval-style transfer evaluation of a model"),
}


def usage() -> str:
    lines = ["usage: st-contrastive COMMAND [options]   (st-contrastive COMMAND --help for its options)", "", "commands:"]
    lines += [f"  {name:<18}{summary}" for name, (_, summary) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in {"-h", "--help"}:
        print(usage())
        return
    if argv[0] not in COMMANDS:
        sys.exit(f"st-contrastive: unknown command {argv[0]!r}\n\n{usage()}")
    module = importlib.import_module(COMMANDS[argv[0]][0])
    module.main(argv[1:])


if __name__ == "__main__":
    main()
