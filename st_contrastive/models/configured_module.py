"""A sentence-transformers module that is saved as its constructor arguments plus its weights."""

from __future__ import annotations

import os
from typing import Any

from sentence_transformers.base.modules import Module


class ConfiguredModule(Module):
    """``config_keys`` name the constructor arguments written to ``config.json``, the weights go to
    ``model.safetensors``, and :meth:`load` rebuilds the module from a local folder or a Hub id."""

    def save(self, output_path: str, *args, safe_serialization: bool = True, **kwargs) -> None:
        os.makedirs(output_path, exist_ok=True)
        self.save_config(output_path)
        self.save_torch_weights(output_path, safe_serialization=safe_serialization)

    @classmethod
    def load(
        cls,
        model_name_or_path: str,
        subfolder: str = "",
        token: bool | str | None = None,
        cache_folder: str | None = None,
        revision: str | None = None,
        local_files_only: bool = False,
        **kwargs: Any,
    ):
        hub_kwargs = {
            "subfolder": subfolder,
            "token": token,
            "cache_folder": cache_folder,
            "revision": revision,
            "local_files_only": local_files_only,
        }
        config = cls.load_config(str(model_name_or_path), **hub_kwargs)
        if not config:
            raise FileNotFoundError(f"{model_name_or_path}: no {cls.config_file_name} of a saved {cls.__name__}")
        return cls.load_torch_weights(str(model_name_or_path), model=cls(**config), **hub_kwargs)
