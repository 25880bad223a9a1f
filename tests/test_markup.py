"""Text from outside reaches a page escaped and isolated; a page links only to http(s) or relative addresses."""

import pytest

from workbench import markup
from workbench.errors import WorkbenchError


def test_text_is_escaped_and_isolated_so_markup_and_bidi_stay_inside():
    shown = markup.text("<img src=x onerror=alert(1)>\u202eevil")
    assert "<img" not in shown and "&lt;img src=x onerror=alert(1)&gt;" in shown
    assert shown.startswith("<bdi>") and shown.endswith("</bdi>")


def test_an_attribute_value_cannot_close_its_quotes():
    assert markup.attr('a" onclick="x') == "a&quot; onclick=&quot;x"


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JavaScript:alert(1)", "  javascript:alert(1)", "java\tscript:alert(1)",
     "data:text/html,<script>alert(1)</script>", "file:///etc/passwd", "vbscript:x", "", "   "],
)  # fmt: skip
def test_a_link_that_runs_code_or_leaves_the_web_is_refused_in_one_line(url):
    with pytest.raises(WorkbenchError, match="--results-link") as err:
        markup.link(url, "--results-link")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("url", ["https://lab.example/results/", "http://127.0.0.1:8866/", "../site/", "course/"])
def test_web_addresses_and_relative_paths_are_links(url):
    assert markup.link(url) == url
    assert markup.anchor(url, "<b>x</b>").startswith(f'<a href="{markup.attr(url)}"><bdi>&lt;b&gt;')
