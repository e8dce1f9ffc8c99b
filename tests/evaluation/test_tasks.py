"""Task names: shortcuts (``sts``, ``transfer``) expand to the tasks, an unknown name is refused naming them."""

import pytest

from st_contrastive.evaluation.tasks import expand_tasks


def test_expand_tasks_shortcuts_and_unknown_names():
    assert expand_tasks(["sts", "mr", "stsb-test"]) == ["stsb-test", "sick-test", "mr"]
    assert len(expand_tasks("transfer")) == 8
    with pytest.raises(ValueError, match=r"'sts-b'.*stsb-test.*mrpc"):
        expand_tasks(["sts-b", "mr"])
