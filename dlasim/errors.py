"""The one exception type users see: a one-line message, exit status 2 at the CLI."""


class DlasimError(Exception):
    """Bad input (model, spec file, flag) or a build that fails like TensorRT would.

    The message is a single line that names the file, field or layer and what was expected.
    """


class ModelError(DlasimError):
    """The model file is unreadable, malformed, or has an unsupported construct."""


class SpecError(DlasimError):
    """A hardware spec file is missing, malformed, or has a bad field."""


class BuildError(DlasimError):
    """The network cannot be built for the requested target (e.g. DLA without GPU fallback)."""
