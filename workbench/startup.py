"""What the workbench's own processes (the ``workbench`` command, an app's kernel) do before their imports.

Not for the library's import: it changes the process, which in a notebook is the user's.
"""

import sys


def skip_iri_grammar() -> None:
    """Keep ``rfc3987_syntax`` out of this process, so jsonschema (under altair) does not import it.

    When installed (Jupyter's format-nongpl extra) it builds an IRI grammar at import: 2.2 of the 2.7 CPU seconds an
    app's kernel spent on its imports, and ~1.6 s of each drawing or reporting verb, for an "iri" format check the
    workbench never runs (python-jsonschema/jsonschema#1428); jsonschema then leaves that one format unchecked.
    Call it before the first import of jsonschema; after that it changes nothing.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
