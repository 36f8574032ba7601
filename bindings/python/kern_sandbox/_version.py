"""The package version: always kern's own (lib/version.h); a test keeps them equal."""

__version__ = "0.31.0"
