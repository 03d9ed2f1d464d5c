"""One module per group of CLI sub-commands; ``explorer.cli`` imports only the one asked for.

The top of the layers (docs/design.md, "Layers"): a command may import any package below it, and
nothing below imports a command. ``agent`` is the hidden ``agent`` sub-command: the methods an
agent serves, handed to ``explorer.agent.serve``, which is transport only.
"""
