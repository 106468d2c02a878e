"""Page parts. Every module in this folder is imported at build start so its
``@slot_renderer`` functions register; add a module, no other file changes."""
import importlib
import pkgutil


def load_all():
    for module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{module}")
