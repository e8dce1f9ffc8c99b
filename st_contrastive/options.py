"""Command-line options declared once: on the fields of a command's config dataclass.

Each field that is an option carries its help text, group and choices in its metadata (:func:`option`); the
command's parser is generated from the class (:func:`build_parser`) and the parsed arguments become an instance of it
(:func:`config_from_args`). A field whose type is itself a dataclass (``training: TrainSettings``) contributes its
own options, with the defaults the enclosing command gives it. An old spelling of an option still works for one
release and prints one line naming the new one.

Nothing here imports torch: ``st-contrastive COMMAND --help`` builds its parser without waiting for it.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

# The groups every command shares, in the order --help shows them; a command adds its own between them.
MODEL_AND_DATA = "model and data"
TRAINING = "training"
EVALUATION = "evaluation"
OUTPUT = "output and publishing"


def option(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    group: str = MODEL_AND_DATA,
    choices: Sequence | None = None,
    flag: str | None = None,
    metavar: str | None = None,
    type: Callable | None = None,
    nargs: str | None = None,
    positional: bool = False,
    const: Any = None,
    deprecated: Sequence[str] = (),
    off: str | None = None,
    off_help: str | None = None,
) -> Any:
    """A dataclass field that is a command-line option ``--field-name`` (``flag`` to name it otherwise).

    ``help``, ``group``, ``choices``, ``metavar``, ``type`` and ``nargs`` are argparse's (type and nargs are read from
    the annotation when not given: ``int | None``, ``list[float]``, ``bool``), ``const`` the value of a flag given
    without one (``nargs="?"``); ``positional`` makes it an argument
    without a flag; ``deprecated`` lists old spellings that still work with a warning; ``off`` names a flag that
    sets the field to its empty value (``--no-eval`` for ``eval_tasks``). A list default is copied per instance."""
    spec = {
        "help": help,
        "group": group,
        "choices": choices,
        "flag": flag,
        "metavar": metavar,
        "type": type,
        "nargs": nargs,
        "const": const,
        "positional": positional,
        "deprecated": tuple(deprecated),
        "off": off,
        "off_help": off_help,
    }
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata={"option": spec})
    return dataclasses.field(default=default, metadata={"option": spec})


def same_option(config_class: type, name: str, default: Any, **changes) -> Any:
    """The option ``name`` of ``config_class``, declared there once, as a field of another class with its own
    ``default`` (and ``changes`` to its spec, such as the group it shows in)."""
    spec = dict(option_spec(next(f for f in dataclasses.fields(config_class) if f.name == name)), **changes)
    return option(default, **spec)


def option_spec(field: dataclasses.Field) -> dict | None:
    return field.metadata.get("option")


def flag_of(field: dataclasses.Field) -> str:
    """The option string of a field: ``--max-rows`` for ``max_rows``, or its ``flag``; positionals by metavar."""
    spec = option_spec(field) or {}
    if spec.get("positional"):
        return spec.get("metavar") or field.name.upper()
    return spec.get("flag") or "--" + field.name.replace("_", "-")


class DefaultsHelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Keeps the description's layout and appends ``(default: X)`` only where the help text does not already say
    what the default is, and never ``(default: None)``: an unset option's help says what happens instead."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS, []) or "default" in text.lower():
            return text
        return super()._get_help_string(action)


def build_parser(config_class: type, prog: str, description: str) -> argparse.ArgumentParser:
    """The parser of a command whose options are the fields of ``config_class`` (and of its nested config
    dataclasses), in their groups. The class's ``option_help`` replaces a field's help text in this command
    (``batch_size``: "documents per batch")."""
    parser = argparse.ArgumentParser(prog=prog, description=description, formatter_class=DefaultsHelpFormatter)
    help_overrides = getattr(config_class, "option_help", {})
    groups = {group.title: group for group in parser._action_groups}
    for field, default, hint in _option_fields(config_class, None):
        spec = option_spec(field)
        if spec["group"] not in groups:
            groups[spec["group"]] = parser.add_argument_group(spec["group"])
        _add_option(groups[spec["group"]], field, spec, default, hint, help_overrides.get(field.name))
    return parser


def config_from_args(config_class: type, args: argparse.Namespace):
    """An instance of ``config_class`` from parsed arguments (nested config dataclasses filled from the same
    names); a field that is not an option keeps its default."""
    return _fill(config_class, args, None)


def config_passed_on(config_class: type, parser: argparse.ArgumentParser, argv: list[str], prog: str):
    """The config of the command that a comparison command runs, from the options it passes on (``argv``, parsed by
    that command's ``parser``); a warning or error names ``prog``, the command the person typed."""
    parser.prog = prog
    return config_from_args(config_class, parser.parse_args(argv))


def _fill(config_class: type, args: argparse.Namespace, defaults: Any):
    hints = typing.get_type_hints(config_class)
    values = {}
    for field in dataclasses.fields(config_class):
        default = _default(field, defaults)
        if dataclasses.is_dataclass(hints[field.name]):
            values[field.name] = _fill(hints[field.name], args, default)
        elif option_spec(field) is not None and hasattr(args, field.name):
            values[field.name] = getattr(args, field.name)
        elif default is not dataclasses.MISSING:
            values[field.name] = default
    return config_class(**values)


def _default(field: dataclasses.Field, defaults: Any):
    """The field's value in ``defaults`` (an instance), else its declared default (MISSING when it has none). A
    nested config built by its bare class (``default_factory=ActiveLearningConfig``) gives None: its own fields'
    declared defaults then apply, before any ``__post_init__`` derives one from another."""
    if defaults is not None:
        return getattr(defaults, field.name)
    if isinstance(field.default_factory, type) and dataclasses.is_dataclass(field.default_factory):
        return None
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return field.default


def _option_fields(config_class: type, defaults: Any):
    hints = typing.get_type_hints(config_class)
    for field in dataclasses.fields(config_class):
        value = _default(field, defaults)
        if dataclasses.is_dataclass(hints[field.name]):
            yield from _option_fields(hints[field.name], value)
        elif option_spec(field) is not None:
            yield field, value, hints[field.name]


def _add_option(group, field: dataclasses.Field, spec: dict, default, hint, help_override: str | None):
    kwargs = _argparse_kwargs(spec, default, hint)
    kwargs["help"] = help_override or spec["help"]
    if spec["positional"]:
        if default is not dataclasses.MISSING:
            kwargs.setdefault("nargs", "?")
        kwargs.setdefault("metavar", field.name.upper())
        group.add_argument(field.name, **kwargs)
        return
    group.add_argument(flag_of(field), dest=field.name, **kwargs)
    replacement = flag_of(field)
    for old in spec["deprecated"]:
        alias = dict(
            kwargs,
            help=argparse.SUPPRESS,
            default=argparse.SUPPRESS,
            replacement=replacement,
            action=_deprecated(kwargs.get("action", "store")),
        )
        group.add_argument(old, dest=field.name, **alias)
    if spec["off"]:
        empty = [] if isinstance(default, list) else None
        group.add_argument(
            spec["off"],
            dest=field.name,
            action="store_const",
            const=empty,
            default=argparse.SUPPRESS,
            help=spec["off_help"] or f"skip it (the same as an empty {replacement})",
        )


def _argparse_kwargs(spec: dict, default, hint) -> dict:
    """argparse's type, nargs and action for a field of type ``hint`` (``int | None``, ``list[float]``, ``bool``)."""
    base, is_list = _base_type(hint)
    kwargs: dict[str, Any] = {} if default is dataclasses.MISSING else {"default": default}
    if default is dataclasses.MISSING and not spec["positional"]:
        kwargs["required"] = True
    if base is bool and not is_list:
        # On by default: a flag of its own (--no-attention) switches it off, or else --NAME / --no-NAME both work.
        kwargs["action"] = (
            "store_true" if default is not True else "store_false" if spec["flag"] else argparse.BooleanOptionalAction
        )
        return kwargs
    kwargs["type"] = spec["type"] or (base if base in (int, float) else None)
    if kwargs["type"] is None:
        del kwargs["type"]
    if is_list or spec["nargs"]:
        kwargs["nargs"] = spec["nargs"] or "+"
    for key in ("choices", "metavar", "const"):
        if spec[key] is not None:
            kwargs[key] = spec[key]
    return kwargs


def _base_type(hint) -> tuple[type | None, bool]:
    """(element type, is a list) of an annotation: ``list[float] | None`` -> (float, True); ``str | int`` -> (None,
    False): a union of several types needs the option's own ``type``."""
    args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        if len(args) != 1:
            return None, False
        hint = args[0]
    if typing.get_origin(hint) is list:
        return typing.get_args(hint)[0], True
    return hint if isinstance(hint, type) else None, False


_STORE_ACTIONS = {
    "store": argparse._StoreAction,
    "store_true": argparse._StoreTrueAction,
    "store_false": argparse._StoreFalseAction,
}


def _deprecated(action: str) -> type[argparse.Action]:
    """An action that does what ``action`` does after one line on stderr naming the option that replaces it."""
    store = _STORE_ACTIONS[action]

    class Deprecated(store):
        def __init__(self, *args, replacement: str, **kwargs):
            super().__init__(*args, **kwargs)
            self.replacement = replacement

        def __call__(self, parser, namespace, values, option_string=None):
            print(
                f"{parser.prog}: warning: {option_string} is deprecated and will be removed in the next release; "
                f"use {self.replacement}",
                file=sys.stderr,
            )
            super().__call__(parser, namespace, values, option_string)

    return Deprecated
