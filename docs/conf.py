"""Sphinx configuration: Markdown pages (myst-parser), the furo theme, the API reference from the
docstrings (autodoc) and the CLI reference from click (sphinx-click). ``make docs`` builds it with
warnings as errors."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cf_env import __version__  # noqa: E402

project = "chickenfoot-rl"
author = "The chickenfoot-rl developers"
copyright = "2026, the chickenfoot-rl developers"
release = version = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx_click"]
source_suffix = {".md": "markdown"}
myst_heading_anchors = 3
exclude_patterns = ["_build", "conftest.py"]
html_theme = "furo"
html_title = "chickenfoot-rl"
html_static_path = ["_static"]
autodoc_member_order = "bysource"
autodoc_inherit_docstrings = False  # the frameworks' base classes write theirs in other dialects
autodoc_typehints = "description"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
# a page links the repository's own files (lab/, configs/): they are not pages of this site
suppress_warnings = ["myst.xref_missing"]
# no "smart" typography: it turns the CLI reference's --option into an en dash, which a copied
# command then fails on
smartquotes = False


def _no_namedtuple_aliases(app, what, name, obj, options, lines):
    """A NamedTuple field's docstring is "Alias for field number N": say nothing rather than that
    (a field with a ``#:`` comment keeps its comment)."""
    if lines and lines[0].startswith("Alias for field number"):
        lines.clear()


def setup(app):
    app.connect("autodoc-process-docstring", _no_namedtuple_aliases)
