"""DeCLUTR (Giorgi et al., 2021) with the paper's defaults; see `python recipes/declutr.py --help`."""

from st_contrastive.recipes.declutr import main

if __name__ == "__main__":
    main()
