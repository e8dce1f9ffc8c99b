"""How the docs-example tier reads the docs: blocks and their markup, commands, caps (the tier itself runs them)."""

import re

import pytest
from docs_examples import CAPS, ROOT, chains, commands, examples, in_run_order, shrink


def test_caps_lower_or_append_steps_and_sizes_and_never_raise_them():
    argv = shrink(["declutr", "--max-steps", "150", "--batch-size", "2", "--eval-tasks", "stsb-dev"], "MINILM")
    assert argv[:6] == ["declutr", "--max-steps", "2", "--batch-size", "2", "--eval-tasks"]
    assert argv[argv.index("--max-rows") + 1] == "8"  # not given: appended
    assert (
        "--max-span-length" not in argv and "--mini-batch-size" not in argv
    )  # capped only where the command sets them
    assert shrink(["multiview", "--max-steps", "0"], "M")[:3] == ["multiview", "--max-steps", "0"]  # the control


def test_a_paper_script_is_capped_by_its_own_row():
    argv = shrink(["recipes/supcon_nli.py", "--supcon-weight", "0", "--batch-size", "64"], "M")
    assert argv[:5] == ["recipes/supcon_nli.py", "--supcon-weight", "0", "--batch-size", "16"]
    assert argv[argv.index("--max-steps") + 1] == "2" and argv[argv.index("--max-rows") + 1] == "64"


def test_every_paper_script_has_caps_and_takes_each_capped_option():
    """A script without a row would run at the paper's size in the tier; a capped option it does not take would stop
    it with argparse's error."""
    # results_script.py is the command line the question folders' scripts share, not a paper script.
    scripts = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "recipes").glob("*.py")
        if path.name != "results_script.py"
    )
    assert scripts == sorted(name for name in CAPS if name.startswith("recipes/"))
    for script in scripts:
        source = (ROOT / script).read_text(encoding="utf-8")
        missing = [option for option in CAPS[script] if not re.search(rf'add_argument\(\s*"{option}"', source)]
        assert not missing, f"{script} takes no {', '.join(missing)}"


def test_placeholders_name_the_default_model_and_help_runs_untouched():
    assert shrink(["evaluate", "MODEL", "--eval-tasks", "sts"], "/models/minilm")[1] == "/models/minilm"
    assert shrink(["declutr", "--help"], "M") == ["declutr", "--help"]


def test_a_bash_block_becomes_argv_lists_with_its_variables_expanded():
    code = (
        'COMMON="--model runs/base --max-steps 150"\nst-contrastive declutr $COMMON \\\n    --output runs/a  # a note\n'
    )
    assert commands(code) == [
        ["st-contrastive", "declutr", "--model", "runs/base", "--max-steps", "150", "--output", "runs/a"]
    ]


def test_examples_run_after_the_ones_they_name(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- example: after=base -->\n```python\nuse()\n```\n\n<!-- example: id=base -->\n```bash\n"
        "st-contrastive pretrain-mlm\n```\n\n```\nnot an example\n```\n\n```python\nalone()\n```\n"
    )
    found = examples([page])
    assert [example.language for example in found] == ["python", "bash", "python"]
    ordered = in_run_order(found)
    assert [example.code for example in ordered] == ["st-contrastive pretrain-mlm", "use()", "alone()"]
    assert [[example.code for example in chain] for chain in chains(found)] == [
        ["st-contrastive pretrain-mlm", "use()"],
        ["alone()"],
    ]


def test_markup_naming_no_example_is_an_error(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- example: after=missing -->\n```python\nuse()\n```\n")
    with pytest.raises(ValueError, match="refers to no example named missing"):
        examples([page])


def test_every_block_of_the_docs_is_found_with_valid_markup():
    found = examples()
    assert {example.language for example in found} == {"bash", "python"}
    assert len(found) >= 20


def test_an_example_can_come_after_one_on_another_page(tmp_path):
    """The README names an example of a docs page and the other way round: one chain, in run order."""
    readme, page = tmp_path / "README.md", tmp_path / "page.md"
    readme.write_text(
        "<!-- example: id=quick-start -->\n```bash\nmake main\n```\n\n"
        "<!-- example: after=base -->\n```python\nuse_base()\n```\n"
    )
    page.write_text(
        "<!-- example: after=quick-start -->\n```python\nuse_main()\n```\n\n"
        "<!-- example: id=base -->\n```bash\nst-contrastive pretrain-mlm\n```\n"
    )
    found = examples([readme, page])
    assert [(example.path.name, example.name) for example in found if "id" in example.options] == [
        ("README.md", "quick-start"),
        ("page.md", "base"),
    ]
    assert [[example.code for example in chain] for chain in chains(found)] == [
        ["make main", "use_main()"],
        ["st-contrastive pretrain-mlm", "use_base()"],
    ]


def test_two_examples_of_one_name_are_an_error_even_on_two_pages(tmp_path):
    (tmp_path / "a.md").write_text("<!-- example: id=base -->\n```bash\nst-contrastive pretrain-mlm\n```\n")
    (tmp_path / "b.md").write_text("<!-- example: id=base -->\n```python\nother()\n```\n")
    with pytest.raises(ValueError, match="more than one example is named base"):
        examples([tmp_path / "a.md", tmp_path / "b.md"])
