"""The SupCon + CE sweep (Tables 2 and 3): CE only vs λ x candidates; see `python recipes/supcon_nli_sweep.py --help`."""

from st_contrastive.recipes.supcon_nli_sweep import main

if __name__ == "__main__":
    main()
