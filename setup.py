"""The compiled core (formatenforcer/core/_native.c): everything else is declared in pyproject.toml.

``optional=True``: where the extension cannot be compiled (no C compiler), the build goes on without it and
formatenforcer runs on its pure-Python walk (``formatenforcer.core_backend()`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "formatenforcer.core._native",
            sources=["formatenforcer/core/_native.c"],
            depends=["formatenforcer/core/_machine.c"],
            optional=True,
        )
    ]
)
