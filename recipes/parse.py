"""Parse a corpus once into a resumable cache of parsed sentences; see `python recipes/parse.py --help`."""

from st_contrastive.recipes.parse import main

if __name__ == "__main__":
    main()
