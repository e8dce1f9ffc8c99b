"""require_extra: a missing optional package is one line naming the extra; any other import failure stays itself.
(The command line's handling of it runs for real in .ci/wheel_check, in a venv without the extras.)"""

from __future__ import annotations

import json

import pytest

from st_contrastive.extras import MissingExtra, require_extra


def test_an_installed_module_is_returned():
    assert require_extra("json", "plots") is json


def test_a_missing_package_names_its_extra_in_one_line():
    with pytest.raises(MissingExtra) as raised:
        require_extra("st_contrastive_absent_package.submodule", "parsing")
    message = str(raised.value)
    assert message == (
        "needs the 'parsing' extra (st_contrastive_absent_package is not installed): "
        'pip install "st-contrastive[parsing]"'
    )
    # The command line prints a ValueError as one line; callers that catch ImportError still catch it.
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, ImportError)
    assert raised.value.extra == "parsing" and raised.value.name == "st_contrastive_absent_package"


def test_an_installed_package_whose_own_import_fails_keeps_its_error(tmp_path, monkeypatch):
    package = tmp_path / "package_with_a_missing_dependency"
    package.mkdir()
    (package / "__init__.py").write_text("import st_contrastive_absent_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as raised:
        require_extra("package_with_a_missing_dependency", "active")
    assert not isinstance(raised.value, MissingExtra) and raised.value.name == "st_contrastive_absent_dependency"
