"""DeCLUTR then SupCon + CE, against each stage alone; see `python recipes/chain.py --help`."""

from st_contrastive.recipes.chain import main

if __name__ == "__main__":
    main()
