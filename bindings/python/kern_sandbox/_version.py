"""The package version: always kern's own (lib/base/version.h); a test keeps them equal."""

__version__ = "0.31.0"
