"""DeCLUTR objective ablation (paper Fig. 3); see `python recipes/declutr_ablation.py --help`."""

from st_contrastive.recipes.declutr_ablation import main

if __name__ == "__main__":
    main()
