"""Multi-view structured sentence encoders (Simoulin & Crabbé, 2021); see `python recipes/multiview.py --help`."""

from st_contrastive.recipes.multiview import main

if __name__ == "__main__":
    main()
