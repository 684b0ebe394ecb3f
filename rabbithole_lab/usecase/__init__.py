"""The use case every front end calls (`Research`), and the files it reads from the user."""
