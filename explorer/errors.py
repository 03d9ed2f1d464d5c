"""The one exception type a user may see, as a single line, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an unusable environment, explained in one line that names the limit and the value.

    The CLI prints it and exits with status 2; the UI shows it inline and keeps running.
    """

    exit_code = 2
