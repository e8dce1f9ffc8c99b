"""Unsupervised SimCSE (Gao et al., 2021), DeCLUTR's control; see `python recipes/simcse.py --help`."""

from st_contrastive.recipes.simcse import main

if __name__ == "__main__":
    main()
