"""A transformers checkpoint (e.g. an original DeCLUTR release) as a sentence-transformers model with mean pooling;
see `python recipes/convert.py --help`."""

from st_contrastive.recipes.convert import main

if __name__ == "__main__":
    main()
