"""The package version is kern's version (lib/base/version.h), and the
pyproject reads it from the package."""

import re

import pytest

import kern_sandbox
from conftest import PACKAGE_ROOT, TOP

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user


def test_version_matches_kern():
    header = (TOP / "lib" / "base" / "version.h").read_text()
    kern_version = re.search(r'#define KERN_VERSION "([^"]+)"', header).group(1)
    assert kern_sandbox.__version__ == kern_version


def test_pyproject_takes_the_version_from_the_package():
    text = (PACKAGE_ROOT / "pyproject.toml").read_text()
    assert 'version = {attr = "kern_sandbox._version.__version__"}' in text
    assert 'dynamic = ["version"]' in text
