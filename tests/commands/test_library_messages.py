"""Library messages said with the options of the command that runs: ``name=value`` and ```name``` become the option
that sets the argument; names the command has no option for stay as the library wrote them."""

from st_contrastive.commands import active, declutr
from st_contrastive.commands.library_messages import options_by_argument, said_as_options


def test_a_library_message_names_the_options_that_set_its_arguments():
    by_argument = options_by_argument(active)
    message = "a.csv: found the labels ['x']; name them with `label_names`, or raise initial=0.01; `epoch` stays"
    assert said_as_options(message, by_argument) == (
        "a.csv: found the labels ['x']; name them with --label-names, or raise --initial 0.01; `epoch` stays"
    )


def test_an_argument_of_another_name_is_said_as_the_option_the_command_maps_it_to():
    message = "lower the span sampler's max_length=512 to 500 or less, or pass short_documents='shrink'"
    assert said_as_options(message, options_by_argument(declutr)) == (
        "lower the span sampler's --max-span-length 512 to 500 or less, or pass --short-documents shrink"
    )
