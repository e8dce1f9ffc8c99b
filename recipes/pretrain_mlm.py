"""Pretrain a small BERT with MLM on the shared corpus: ``python recipes/pretrain_mlm.py --help``.

Same as ``st-contrastive pretrain-mlm``; see ``st_contrastive/recipes/pretrain_mlm.py``.
"""

from st_contrastive.recipes.pretrain_mlm import main

if __name__ == "__main__":
    main()
