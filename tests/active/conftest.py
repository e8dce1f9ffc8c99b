import pytest


@pytest.fixture()
def base_model(tiny_model, tmp_path) -> str:
    """The tiny sentence model saved as a folder: what a round loads as its base model."""
    path = tmp_path / "base"
    tiny_model.save(str(path))
    return str(path)
