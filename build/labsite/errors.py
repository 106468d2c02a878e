"""The build's one error type: it names the file and what is wrong."""


class BuildError(Exception):
    def __init__(self, where, message):
        self.where = str(where)
        super().__init__(f"{where}: {message}")
