"""Command-line options declared once: on the fields of a command's config dataclass, and of the library's settings
dataclasses it holds.

A command's own option carries its help text, group and choices in its metadata (:func:`option`). A field of a
library settings dataclass (``TrainSettings``, ``ActiveLearningConfig``) is an option when its metadata has a
``help`` text, as transformers' ``HfArgumentParser`` reads it; the library names no flag, so the command gives any
flag other than ``--field-name`` (``option_flags``) and the group its options show in (the enclosing field's
``group`` metadata). The command's parser is generated from the class (:func:`build_parser`) and the parsed
arguments become an instance of it (:func:`config_from_args`), whose ``__post_init__`` rules then refuse a bad value
(an ``ArgumentError``, which the command prints with the option's name).

Why not ``HfArgumentParser`` itself: it has no argument groups, no flag of another name (``--objective`` for
``objectives``), no ``--no-eval`` that empties a list, no optional-value flag (``nargs="?"``), no positional
arguments and no nested dataclasses (``training: TrainSettings``), all of which the commands use.

Nothing here imports torch: ``st-contrastive COMMAND --help`` builds its parser without waiting for it.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any

from st_contrastive.arguments import ArgumentError

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
    off: str | None = None,
    off_help: str | None = None,
) -> Any:
    """A dataclass field that is a command-line option ``--field-name`` (``flag`` to name it otherwise).

    ``help``, ``group``, ``choices``, ``metavar``, ``type`` and ``nargs`` are argparse's (type and nargs are read from
    the annotation when not given: ``int | None``, ``list[float]``, ``bool``), ``const`` the value of a flag given
    without one (``nargs="?"``); ``positional`` makes it an argument without a flag; ``off`` names a flag that
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


def settings_from(settings_class: type, config):
    """The library settings ``settings_class`` built from the fields of a command's ``config`` that have their names
    (its other arguments at their defaults): building it applies its rules."""
    names = [field.name for field in dataclasses.fields(settings_class) if field.init and hasattr(config, field.name)]
    return settings_class(**{name: getattr(config, name) for name in names})


def option_spec(field: dataclasses.Field, group: str = MODEL_AND_DATA) -> dict | None:
    """How ``field`` is an option: a command's :func:`option` spec, or for a library settings field with a ``help``
    text, that text (and its ``choices``) in ``group``; None when the field is no option."""
    if "option" in field.metadata:
        return field.metadata["option"]
    if "help" not in field.metadata:
        return None
    return dict(
        option(help=field.metadata["help"], group=group, choices=field.metadata.get("choices")).metadata["option"]
    )


def flag_of(field: dataclasses.Field, flags: dict[str, str] | None = None) -> str:
    """The option string of a field: ``--max-rows`` for ``max_rows``, or its ``flag`` (the command's ``flags`` for
    a library field); positionals by metavar."""
    spec = option_spec(field) or {}
    if spec.get("positional"):
        return spec.get("metavar") or field.name.upper()
    return spec.get("flag") or (flags or {}).get(field.name) or "--" + field.name.replace("_", "-")


def option_of(config_class: type, name: str) -> str:
    """The option that sets the field ``name`` anywhere in ``config_class`` (nested settings included): what a
    message about the argument ``name`` calls it on the command line."""
    flags = getattr(config_class, "option_flags", {})
    for field, _, _, _ in _option_fields(config_class, None):
        if field.name == name:
            return flag_of(field, flags)
    return "--" + name.replace("_", "-")


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
    (``batch_size``: "documents per batch"), its ``option_flags`` the flag of a library field (``objectives``:
    ``--objective``)."""
    parser = argparse.ArgumentParser(prog=prog, description=description, formatter_class=DefaultsHelpFormatter)
    help_overrides = getattr(config_class, "option_help", {})
    flags = getattr(config_class, "option_flags", {})
    groups = {group.title: group for group in parser._action_groups}
    for field, spec, default, hint in _option_fields(config_class, None):
        if spec["group"] not in groups:
            groups[spec["group"]] = parser.add_argument_group(spec["group"])
        _add_option(groups[spec["group"]], field, spec, default, hint, help_overrides.get(field.name), flags)
    return parser


def config_from_args(config_class: type, args: argparse.Namespace):
    """An instance of ``config_class`` from parsed arguments (nested config dataclasses filled from the same
    names); a field that is not an option keeps its default. A value the settings' rules refuse is an
    ``ArgumentError`` naming the argument: it is raised again as a ``SettingError`` naming the option."""
    from st_contrastive.commands.input_checks import refused_option

    try:
        return _fill(config_class, args, None)
    except ArgumentError as error:
        raise refused_option(error, option_of(config_class, error.argument)) from None


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


def _option_fields(config_class: type, defaults: Any, group: str = MODEL_AND_DATA):
    """(field, spec, default, annotation) of every option of ``config_class``; a nested settings dataclass's options
    show in the group its field's metadata names, else in one named after the field."""
    hints = typing.get_type_hints(config_class)
    for field in dataclasses.fields(config_class):
        value = _default(field, defaults)
        if dataclasses.is_dataclass(hints[field.name]):
            # Named by the field that holds them unless it names a group: `training` options show in "training".
            yield from _option_fields(
                hints[field.name], value, field.metadata.get("group", field.name.replace("_", " "))
            )
        elif (spec := option_spec(field, group)) is not None:
            yield field, spec, value, hints[field.name]


def _add_option(group, field: dataclasses.Field, spec: dict, default, hint, help_override: str | None, flags: dict):
    kwargs = _argparse_kwargs(spec, default, hint)
    kwargs["help"] = help_override or spec["help"]
    if spec["positional"]:
        if default is not dataclasses.MISSING:
            kwargs.setdefault("nargs", "?")
        kwargs.setdefault("metavar", field.name.upper())
        group.add_argument(field.name, **kwargs)
        return
    flag = flag_of(field, flags)
    group.add_argument(flag, dest=field.name, **kwargs)
    if spec["off"]:
        empty = [] if isinstance(default, list) else None
        group.add_argument(
            spec["off"],
            dest=field.name,
            action="store_const",
            const=empty,
            default=argparse.SUPPRESS,
            help=spec["off_help"] or f"skip it (the same as an empty {flag})",
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
