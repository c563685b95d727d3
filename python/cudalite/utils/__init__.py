"""cudalite.utils: ``data`` (Dataset, DataLoader), imported on first use."""


def __getattr__(name):
    if name == "data":
        import importlib

        return importlib.import_module("cudalite.utils.data")
    raise AttributeError(f"module 'cudalite.utils' has no attribute '{name}'")
