"""Publish a finished run to the Hugging Face Hub with its model card; see `python recipes/push.py --help`."""

from st_contrastive.recipes.push import main

if __name__ == "__main__":
    main()
