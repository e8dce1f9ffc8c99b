"""The settings each part is configured with, their defaults and rules written once: training, the losses'
objectives, active learning and evaluation. Nothing here imports torch, so a command builds its parser and checks
its arguments before anything heavy loads."""
