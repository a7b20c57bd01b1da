from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("mirkit")
except PackageNotFoundError:  # running from a source tree (PYTHONPATH=src)
    __version__ = "0.0.0+source"
