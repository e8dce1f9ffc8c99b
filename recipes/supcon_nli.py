"""SupCon + CE on NLI (Zhang et al., 2021) with the paper's defaults; see `python recipes/supcon_nli.py --help`."""

from st_contrastive.recipes.supcon_nli import main

if __name__ == "__main__":
    main()
