"""Label Studio's JSON task files: a project's export read as labelled and unlabelled texts (the latest annotation
that was not skipped), tasks written for import with annotations and predictions, and the file loaded as a
text-classification dataset whose annotated tasks are the labels and the rest the pool."""

import json

import pytest

from st_contrastive.data.label_studio import (
    is_label_studio_export,
    label_config,
    label_studio_tasks,
    read_label_studio_export,
)
from st_contrastive.data.text_classification import load_text_classification


def annotation(label, *, at="2026-03-01T10:00:00.000000Z", cancelled=False, choices=None, number=1):
    """An annotation as Label Studio 1.23 exports it: a skip is ``was_cancelled`` with an empty result."""
    value = {"choices": choices if choices is not None else [label]}
    result = [] if cancelled else [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": value}]
    return {
        "id": number,
        "completed_by": 1,
        "result": result,
        "was_cancelled": cancelled,
        "ground_truth": False,
        "created_at": at,
        "updated_at": at,
        "lead_time": 4.2,
    }


def write_export(path, tasks):
    path.write_text(json.dumps(tasks, indent=1))
    return str(path)


EXPORT = [  # as Label Studio exports JSON: ids, data with a second field, every annotation with its times
    {
        "id": 11,
        "data": {"text": "Refund my order", "channel": "mail"},
        "annotations": [annotation("billing")],
        "predictions": [],
    },
    {
        "id": 12,
        "data": {"text": "The app crashes", "channel": "chat"},
        "annotations": [
            annotation("bug", at="2026-03-02T09:00:00.000000Z", number=2),  # the latest wins, wherever it is listed
            annotation("billing", at="2026-03-01T10:00:00.000000Z", number=3),
            annotation(None, at="2026-03-03T09:00:00.000000Z", cancelled=True, number=4),  # a skip is no label
        ],
    },
    {
        "id": 13,
        "data": {"text": "Charged twice", "channel": "mail"},
        "annotations": [  # the same time (a save within the microsecond): the later in the list
            annotation("bug", number=5),
            annotation("billing", number=6),
        ],
    },
    {
        "id": 14,
        "data": {"text": "How do I export?", "channel": "mail"},
        "annotations": [annotation(None, cancelled=True)],
    },
    {"id": 15, "data": {"text": "Is there a dark mode", "channel": "chat"}, "annotations": []},
    {"id": 16, "data": {"text": "Add a second user", "channel": "chat"}},
]


def test_an_export_gives_the_latest_kept_choice_of_each_task(tmp_path):
    export = read_label_studio_export(write_export(tmp_path / "project.json", EXPORT))
    assert export.texts == [task["data"]["text"] for task in EXPORT] and export.text_key == "text"
    assert export.labels == ["billing", "bug", "billing", None, None, None]
    assert export.task_ids == [11, 12, 13, 14, 15, 16] and export.label_names == ["billing", "bug"]


def test_label_names_fix_the_set_and_refuse_a_choice_outside_it(tmp_path):
    path = write_export(tmp_path / "project.json", EXPORT)
    export = read_label_studio_export(path, ["question", "bug", "billing"])
    assert export.label_names == ["question", "bug", "billing"] and export.labels[1] == "bug"
    with pytest.raises(ValueError, match=r"project\.json, task 11: its annotation's choice 'billing' is not one of"):
        read_label_studio_export(path, ["bug", "question"])


def test_numbered_labels_sort_as_numbers_as_in_a_table_file(tmp_path):
    tasks = [{"id": i, "data": {"text": f"t{i}"}, "annotations": [annotation(str(i))]} for i in (10, 2, 1)]
    assert read_label_studio_export(write_export(tmp_path / "stars.json", tasks)).label_names == ["1", "2", "10"]


def test_an_export_is_a_dataset_whose_annotated_tasks_are_the_labelled_rows(tmp_path):
    data = load_text_classification(write_export(tmp_path / "project.json", EXPORT))
    assert data.name == "project" and data.label_names == ["billing", "bug"]
    assert data.train_texts[0] == "Refund my order" and len(data.train_texts) == 6
    assert data.train_labels == [0, 1, 0, None, None, None] and data.test_texts == []
    named = load_text_classification(str(tmp_path / "project.json"), ["bug", "billing", "question"])
    assert named.train_labels == [1, 0, 1, None, None, None]
    with pytest.raises(ValueError, match=r"task 11: its annotation's choice 'billing' is not one of \['bug'"):
        load_text_classification(str(tmp_path / "project.json"), ["bug", "question"])


def test_a_json_lines_file_named_json_still_reads_as_a_table(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text('{"text": "a b", "label": "x"}\n{"text": "c d", "label": "y"}\n')
    assert not is_label_studio_export(path)
    assert load_text_classification(str(path)).train_labels == [0, 1]


def test_the_text_field_is_text_or_the_one_text_in_every_task(tmp_path):
    tasks = [{"data": {"question": "Why?", "source": "mail"}}, {"data": {"question": "How?", "source": "chat"}}]
    with pytest.raises(ValueError, match=r"two\.json: no single text field .*\['question', 'source'\]\)"):
        read_label_studio_export(write_export(tmp_path / "two.json", tasks))
    one = [{"id": 1, "data": {"question": "Why?", "n": 3}}, {"id": 2, "data": {"question": "How?", "n": 4}}]
    export = read_label_studio_export(write_export(tmp_path / "one.json", one))
    assert export.text_key == "question" and export.texts == ["Why?", "How?"] and export.labels == [None, None]
    gap = [{"id": 1, "data": {"text": "Why?", "source": "mail"}}, {"id": 2, "data": {"text": None, "source": "chat"}}]
    with pytest.raises(ValueError, match=r"gap\.json, task 2: no text in data\.text \(got None\)"):
        read_label_studio_export(write_export(tmp_path / "gap.json", gap))  # not the source field instead


@pytest.mark.parametrize(
    ("result", "found"),
    [
        ({"choices": ["billing", "bug"]}, "2 choices in 1 choices results"),
        ({"choices": []}, "0 choices in 1 choices results"),
        (None, "no choices result"),
    ],
)
def test_an_annotation_without_exactly_one_choice_is_refused_by_task_id(tmp_path, result, found):
    kept = annotation("billing")
    if result is None:  # a text area's result alone
        kept["result"] = [{"from_name": "note", "to_name": "text", "type": "textarea", "value": {"text": ["?"]}}]
    else:
        kept["result"][0]["value"] = result
    tasks = [EXPORT[0], {"id": 7, "data": {"text": "x", "channel": "mail"}, "annotations": [kept]}]
    with pytest.raises(ValueError, match=rf"several\.json, task 7: its latest annotation has {found}"):
        read_label_studio_export(write_export(tmp_path / "several.json", tasks))


def test_a_file_that_is_no_export_says_so_in_one_line(tmp_path):
    (tmp_path / "columns.json").write_text(json.dumps({"text": ["a"], "label": ["b"]}))
    assert not is_label_studio_export(tmp_path / "columns.json")
    with pytest.raises(
        ValueError, match=r'columns\.json: not a Label Studio JSON export \(a list of tasks with "data"\)'
    ):
        read_label_studio_export(tmp_path / "columns.json")
    (tmp_path / "texts.json").write_text(json.dumps([{"text": "a"}]))
    with pytest.raises(ValueError, match=r"texts\.json: not a Label Studio JSON export"):
        read_label_studio_export(tmp_path / "texts.json")


def test_tasks_written_for_import_read_back_as_an_export(tmp_path):
    tasks = label_studio_tasks(
        ["a b", "c d", "e f"],
        labels=["x", None, "y"],
        predictions=[("x", 0.9), ("y", 0.6), None],
        from_name="sentiment",
        to_name="text",
        model_version="round-2",
        row_ids=[4, 9, 12],
    )
    assert [task["data"] for task in tasks] == [
        {"text": "a b", "row": 4},
        {"text": "c d", "row": 9},
        {"text": "e f", "row": 12},
    ]
    assert "annotations" not in tasks[1] and "predictions" not in tasks[2]
    assert tasks[1]["predictions"] == [
        {
            "model_version": "round-2",
            "score": 0.6,
            "result": [{"from_name": "sentiment", "to_name": "text", "type": "choices", "value": {"choices": ["y"]}}],
        }
    ]
    export = read_label_studio_export(write_export(tmp_path / "tasks.json", tasks))
    assert export.texts == ["a b", "c d", "e f"] and export.labels == ["x", None, "y"]
    assert export.label_names == ["x", "y"] and export.task_ids == [0, 1, 2]  # no ids before Label Studio gives them


def test_tasks_refuse_predictions_without_a_version_and_lists_of_another_length():
    with pytest.raises(ValueError, match="model_version: predictions need one"):
        label_studio_tasks(["a"], predictions=[("x", 0.5)], from_name="label", to_name="text")
    with pytest.raises(ValueError, match="labels: 1 values for 2 texts"):
        label_studio_tasks(["a", "b"], labels=["x"], from_name="label", to_name="text")


def test_the_labelling_interface_offers_each_label_once():
    from xml.etree import ElementTree

    view = ElementTree.fromstring(label_config(["billing", 'say "hi"'], from_name="sentiment"))
    choices = view.find("Choices")
    assert choices.get("name") == "sentiment" and choices.get("toName") == "text" and choices.get("choice") == "single"
    assert [c.get("value") for c in choices] == ["billing", 'say "hi"'] and view.find("Text").get("value") == "$text"
