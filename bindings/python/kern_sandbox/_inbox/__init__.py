"""Scripts that run INSIDE a box under the image's python3 (>= 3.8).

They are shipped as source text (see ``kern_sandbox._runner``), never
imported by the package itself at run time: ``rich.py`` (mime bundles,
shared by the one-shot runner and the kernel driver) and ``runner.py`` (the
one-shot runner, spec §15.1). Standard library only, no annotations a 3.8
interpreter cannot read.
"""
