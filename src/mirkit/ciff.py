"""CIFF import and export (:mod:`mirkit.index.ciff`, importable under this shorter name)."""

from mirkit.index.ciff import CIFF_VERSION, CiffFormatError, export_ciff, import_ciff

__all__ = ["CIFF_VERSION", "CiffFormatError", "export_ciff", "import_ciff"]
