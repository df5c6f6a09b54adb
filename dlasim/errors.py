"""The one exception type users see: a one-line message, exit status 2 at the CLI; the suggestion it may carry."""


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


def did_you_mean(text: str, names: list[str]) -> str:
    """': did you mean orin-nx-16gb?' for a name of `names` that holds `text`, is held in it, has its words in it
    (agx-orin) or nearly spells it; else ''."""
    import difflib
    t = text.lower()
    words = set(t.replace("_", "-").split("-"))
    near = [n for n in names if t and (t in n or n in t or set(n.replace("_", "-").split("-")) <= words)]
    near += difflib.get_close_matches(t, names, n=3, cutoff=0.6)
    near = list(dict.fromkeys(near))[:3]
    return f": did you mean {' or '.join(near)}?" if near else ""
