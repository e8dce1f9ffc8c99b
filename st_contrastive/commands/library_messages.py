"""The library's messages in the command line's words: each argument a message names (``short_documents='skip'``,
```label_names```) said as the option of the running command that sets it (``--short-documents skip``,
``--label-names``). The library never knows a flag name; the commands translate what it says."""

from __future__ import annotations

import re

# `name=value` or `name='value'` in a library message: an argument the reader changes; `name` alone: one without a
# value to show.
ARGUMENT = re.compile(r"\b([a-z][a-z_]*)=(?:'([^']*)'|([^\s,;:)]+))")
ARGUMENT_NAME = re.compile(r"`([a-z][a-z_]*)`")


def said_as_options(message: str, argument_options: dict[str, str]) -> str:
    """A library message with each argument it names (``short_documents='skip'``, ```label_names```) said as the
    command's option that sets it (``--short-documents skip``, ``--label-names``); ``argument_options`` maps the
    arguments the command sets to its options."""

    def option(match: re.Match) -> str:
        flag = argument_options.get(match.group(1))
        return match.group(0) if flag is None else f"{flag} {match.group(2) or match.group(3)}"

    with_values = ARGUMENT.sub(option, message)
    return ARGUMENT_NAME.sub(lambda match: argument_options.get(match.group(1), match.group(0)), with_values)


def options_by_argument(command) -> dict[str, str]:
    """The option that sets each argument of a command: its parser's options by the field they fill, and the
    command's ``ARGUMENT_OPTIONS`` for library arguments of other names (SpanSampler's ``max_length``)."""
    parsed = {
        action.dest: action.option_strings[0] for action in command.build_parser()._actions if action.option_strings
    }
    return parsed | getattr(command, "ARGUMENT_OPTIONS", {})
