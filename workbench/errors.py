"""Errors a user sees: each names the problem and the fix."""


class WorkbenchError(Exception):
    """A problem the user can fix; the message says how."""


class DataSourceError(WorkbenchError):
    """A knowledge source (WordNet, GCIDE) or a cache is missing or corrupt."""


class ProbeFormatError(WorkbenchError):
    """A probe file is malformed; the message names the file and line."""


class SpecError(WorkbenchError, ValueError):
    """A configuration value is out of range; the message names the parameter."""
