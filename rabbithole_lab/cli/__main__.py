"""`python -m rabbithole_lab.cli`: the `rabbithole` command."""

from rabbithole_lab.cli.main import cli_entry

cli_entry()
