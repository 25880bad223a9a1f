"""Text from outside, as a page shows it: one escaping and isolation path, one link check (issue 60).

Every string that did not come from the workbench's own code (a served model's id, a batch or folder name, a crowd
export's voter, a question, a user's option) reaches HTML through ``text`` (or ``attr`` inside an attribute), and
every link a page writes through ``link``. A page builder never puts such a value into an f-string of markup
directly: ``tests/test_markup.py`` walks the code and fails on one that does.

Identities (labels, names) are also checked where they enter, by ``workbench.io.check_label``: what is refused there
never reaches a page; what passes is still escaped and isolated here, since a page cannot know where a value came
from.
"""

import html
from urllib.parse import quote, urlsplit

from workbench.errors import WorkbenchError

LINK_SCHEMES = ("", "http", "https")
"""The schemes a page's link may have: a web address or a relative path. ``javascript:``, ``data:``, ``file:`` and
the rest run code or reach outside the page on a click."""


def text(value: object) -> str:
    """``value`` as text a page shows: escaped, and isolated in ``<bdi>`` so that a bidi control inside it reorders
    its own element at most, never the page around it."""
    return f"<bdi>{html.escape(str(value))}</bdi>"


def attr(value: object) -> str:
    """``value`` escaped for use inside a quoted attribute (quotes included)."""
    return html.escape(str(value), quote=True)


def link(url: str, option: str = "the link") -> str:
    """``url`` if a page may link to it (an http(s) address or a relative path), else a one-line error naming
    ``option``. The scheme is read as a browser reads it: case, surrounding spaces and tabs or line breaks inside
    do not hide a ``javascript:``."""
    if not isinstance(url, str) or not url.strip():
        raise WorkbenchError(f"{option} is empty; give an http(s) address or a relative path")
    if any(ord(char) < 32 or ord(char) == 0x7F for char in url):
        raise WorkbenchError(f"{option} {url!r} holds a control character; give a plain http(s) address or path")
    scheme = urlsplit(url.strip()).scheme.lower()
    if scheme not in LINK_SCHEMES:
        raise WorkbenchError(f"{option} {url!r} is no link a page may follow ({scheme}: runs code or leaves the "
                             "page); give an http(s) address or a relative path")  # fmt: skip
    return url.strip()


def local(name: str) -> str:
    """A link to the file ``name`` beside the page (a notebook's page), whatever its name: percent-encoded whole, so
    that a file named ``javascript:alert(1).html``, ``//host.html``, ``a#b.html`` or ``a?b.html`` is that file, never a
    scheme, another host, a fragment or a query."""
    return quote(name, safe="")


def anchor(url: str, label: object, option: str = "the link") -> str:
    """An ``<a>`` to ``url`` (checked by ``link``) showing ``label`` (escaped and isolated)."""
    return f'<a href="{attr(link(url, option))}">{text(label)}</a>'
