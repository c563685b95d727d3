"""cudalite.utils: ``data`` (Dataset, DataLoader) and ``dlpack``, imported on first use."""


def __getattr__(name):
    if name in ("data", "dlpack"):
        import importlib

        return importlib.import_module(f"cudalite.utils.{name}")
    raise AttributeError(f"module 'cudalite.utils' has no attribute '{name}'")
