"""The exception hierarchy of ``hpo``.

Every error the tool raises on purpose derives from :class:`HpoError`; the CLI turns
each into one line on stderr and a non-zero exit code, never a traceback.
"""

from __future__ import annotations

__all__ = ["ConfigError", "DataFormatError", "HpoError", "UsageError"]


class HpoError(Exception):
    """Base class of every error raised on purpose by ``hpo``."""


class DataFormatError(HpoError):
    """An input file is missing, unreadable, or not in the documented TpuGraphs format.

    The message names the file, the key, what was expected and what was found.
    """


class ConfigError(HpoError):
    """A setting, search space, campaign or model folder is invalid or incompatible."""


class UsageError(HpoError):
    """The tool was asked for something that cannot be done (missing run, live name, ...)."""
