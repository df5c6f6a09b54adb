"""The package version (pyproject.toml [project] version says the same)."""
__version__ = "0.1.0"
