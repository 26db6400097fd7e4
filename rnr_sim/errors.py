"""Errors a user can fix: the CLI prints them as one line and exits 2."""


class InputError(Exception):
    """Bad input (a file, a name, a switch): the message names the place and the fix."""
