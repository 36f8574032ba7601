"""The package's sources: readable by the oldest interpreters they promise
(3.9 on the host, 3.8 for the scripts that run inside a box) and standard
library only at run time."""

import ast
import pathlib
import sys

import pytest

from conftest import PACKAGE_ROOT

# The same for every user: the unprivileged run of tests/run leaves it out.
pytestmark = pytest.mark.any_user

PKG = PACKAGE_ROOT / "kern_sandbox"
IN_BOX = {"_cell.py", "_oneshot.py", "_kernel_driver.py"}
# Imported lazily, inside the one factory that needs it (an optional extra).
OPTIONAL = {"langchain_core", "langchain"}
SOURCES = sorted(PKG.rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PKG)) for p in SOURCES])
def test_parses_with_the_oldest_supported_grammar(path):
    oldest = (3, 8) if path.name in IN_BOX else (3, 9)
    ast.parse(path.read_text(), str(path), feature_version=oldest)


@pytest.mark.skipif(not hasattr(sys, "stdlib_module_names"), reason="needs Python >= 3.10")
@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(PKG)) for p in SOURCES])
def test_standard_library_only(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            assert top in sys.stdlib_module_names or top == "kern_sandbox" or top in OPTIONAL, \
                "%s imports %s" % (path.name, name)


def test_every_public_name_has_its_own_docstring():
    # help(kern_sandbox) is the reference (issue 13): every exported name and
    # every public method or property of an exported class says what it does
    # (a dataclass's generated "Name(field: type, ...)" does not count).
    import inspect

    import kern_sandbox
    missing = []
    for name in kern_sandbox.__all__:
        if name == "__version__":
            continue
        obj = getattr(kern_sandbox, name)
        doc = (inspect.getdoc(obj) or "").strip()
        if not doc or doc.startswith(name + "("):
            missing.append(name)
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and (callable(value) or isinstance(value, property)):
                    if not (value.__doc__ or "").strip():
                        missing.append(name + "." + attr)
    assert (kern_sandbox.__doc__ or "").strip()
    assert missing == []
