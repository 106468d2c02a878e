"""Decorator registries: a module registers a function under a name in a
table the build reads (page slots, tutorial chapters, figure kinds); a name
registered twice is a programming error, caught when the modules import."""


def registrar(table, what, entry=lambda name, function: function):
    """A decorator factory: ``@registrar(TABLE, "slot")("gallery")`` puts
    ``entry(name, function)`` into ``TABLE[name]`` and returns the function."""
    def named(name):
        def register(function):
            if name in table:
                raise ValueError(f"{what} {name!r} is registered twice")
            table[name] = entry(name, function)
            return function
        return register
    return named
