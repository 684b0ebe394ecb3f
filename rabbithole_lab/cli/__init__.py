"""The `rabbithole` command line: one module per group of commands, the terminal front end and the smoke run."""
