"""The build's one error type: it names the file and what is wrong."""
from pathlib import Path

from .paths import display_path


class BuildError(Exception):
    def __init__(self, where, message):
        self.where = display_path(where) if isinstance(where, Path) else str(where)
        super().__init__(f"{self.where}: {message}")
