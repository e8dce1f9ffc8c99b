"""The settings each part is configured with, declared once (each field is also its command-line option): training,
active learning and evaluation. Nothing here imports torch, so a command builds its parser and checks its
arguments before anything heavy loads; the packages that use these settings re-export them."""
