"""One module per group of CLI sub-commands; ``explorer.cli`` imports only the one asked for."""
