"""Deal-file formats, one module each, registered by name and extension (see ``base``)."""

from .base import BoardRecord, DealFormat, ExportMeta, FormatError, ReadProblem, ReadResult, by_name, by_path, formats

# Format modules register themselves on import; list them here as they land.
_FORMAT_MODULES: tuple[str, ...] = ("pbn", "lin", "dlm", "dup", "bri", "dge", "ber", "bhg", "csvfmt", "jsonfmt")


def load_all() -> None:
    import importlib

    for module in _FORMAT_MODULES:
        importlib.import_module(f"dealer.formats.{module}")


__all__ = [
    "BoardRecord",
    "DealFormat",
    "ExportMeta",
    "FormatError",
    "ReadProblem",
    "ReadResult",
    "by_name",
    "by_path",
    "formats",
    "load_all",
]
