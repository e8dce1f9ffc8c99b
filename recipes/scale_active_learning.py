"""SCALe active learning (supcon-ce / ce / siamese; SetFit and frozen-base references); see `python recipes/scale_active_learning.py --help`."""

from st_contrastive.recipes.scale_active_learning import main

if __name__ == "__main__":
    main()
