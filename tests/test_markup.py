"""Text from outside reaches a page escaped and isolated; a page links only to http(s) or relative addresses."""

import ast
import re
from pathlib import Path

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


@pytest.mark.parametrize("name", ["javascript:alert(1).html", "//evil.example/x.html", "a#b?c.html", "01 <b>.html"])
def test_a_local_link_is_the_file_of_that_name_never_a_scheme_host_fragment_or_query(name):
    from urllib.parse import unquote, urlsplit

    url = markup.local(name)
    assert unquote(url) == name and markup.link(url) == url
    assert urlsplit(url)[:2] == ("", "") and not urlsplit(url).fragment and not urlsplit(url).query


ROOT = Path(__file__).resolve().parents[1]

# What a page builder may put into markup it writes (``test_every_value_in_the_markup_the_code_writes_is_escaped``):
TAG = re.compile(
    r"</?(a|aside|b|bdi|body|br|button|caption|code|details|div|em|h[1-6]|head|html|i|img|input|label|li|link|main"
    r"|meta|nav|ol|option|p|pre|script|section|select|small|span|strong|style|summary|sup|sub|table|tbody|td|th"
    r"|thead|title|tr|ul)[\s>/]"
)
"""An HTML tag in a string literal: the f-string, ``+`` or ``.format`` template around it builds markup."""
ESCAPING = {"text", "attr", "anchor", "escape", "quoteattr", "script_json", "table", "prompt_block", "len"}
"""Calls whose value may go into markup: ``markup.text``/``attr``/``anchor``, ``html.escape``, XML's ``quoteattr``,
``reports.script_json`` (JSON no text breaks out of a ``<script>``), ``widgets.render.table``/``prompt_block`` (every
cell and line escaped), and ``len`` (a number)."""
NUMBER_SPEC = re.compile(r"[,_]|[bdeEfFgGnoxX%]$")
"""A format spec only a number takes (``{n:,}``, ``{x:.1f}``, ``{share:.0%}``): a string there is a TypeError."""
PAGE_CODE = [path for package in ("workbench", "widgets") for path in sorted((ROOT / package).rglob("*.py"))]


def safe_in_markup(node: ast.expr) -> bool:
    """Whether the value of ``node`` may go into markup as it is. The rule: a literal; a call of ``ESCAPING`` (or a
    private helper of the same name, ``_script_json``); a value the code built as markup, named so (a name, attribute
    or function ending in ``_html``, a ``Section.html``, or a module's UPPER_CASE constant); a number with a format
    spec; and ``if``/``+``/``"".join``/f-strings of those."""
    match node:
        case ast.Constant():
            return True
        case ast.Name(id=name) | ast.Attribute(attr=name):
            return name == "html" or name.endswith("_html") or (name.isupper() and len(name) > 1)
        case ast.Call(func=ast.Attribute(attr="join", value=ast.Constant()), args=[items]):
            return safe_in_markup(items.elt) if isinstance(items, ast.GeneratorExp | ast.ListComp) else \
                safe_in_markup(items)  # fmt: skip
        case ast.Call(func=ast.Attribute(attr=name) | ast.Name(id=name)):
            return name.lstrip("_") in ESCAPING or name.endswith("_html")
        case ast.IfExp(body=body, orelse=orelse):
            return safe_in_markup(body) and safe_in_markup(orelse)
        case ast.BinOp(op=ast.Add(), left=left, right=right):
            return safe_in_markup(left) and safe_in_markup(right)
        case ast.JoinedStr(values=values):
            return all(safe_in_markup(value) for value in values)
        case ast.FormattedValue(value=value, conversion=-1, format_spec=None):
            return safe_in_markup(value)
        case ast.FormattedValue(format_spec=ast.JoinedStr(values=[ast.Constant(value=str(spec))])):
            return bool(NUMBER_SPEC.search(spec))
    return False


def unescaped_values(tree: ast.Module) -> list[ast.expr]:
    """The values put into markup (an f-string, ``+`` or ``.format`` of a literal holding a tag) that are not
    ``safe_in_markup``."""
    templates = {  # module constants holding markup, filled in with .format
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        and TAG.search(node.value.value) for target in node.targets if isinstance(target, ast.Name)
    }  # fmt: skip
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            literal = "".join(part.value for part in node.values if isinstance(part, ast.Constant))
            if TAG.search(literal):
                found += [part.value for part in node.values if not safe_in_markup(part)]  # a FormattedValue's
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            parts = _added(node)
            if any(isinstance(p, ast.Constant) and isinstance(p.value, str) and TAG.search(p.value) for p in parts):
                found += [part for part in parts if not safe_in_markup(part)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
            template = node.func.value
            if (isinstance(template, ast.Constant) and isinstance(template.value, str) and TAG.search(template.value)) \
                    or (isinstance(template, ast.Name) and template.id in templates):  # fmt: skip
                values = [*node.args, *(keyword.value for keyword in node.keywords)]
                found += [value for value in values if not safe_in_markup(value)]
    return list({id(node): node for node in found}.values())  # a value inside nested sums once


def _added(node: ast.expr) -> list[ast.expr]:
    """The terms of a sum ``a + b + c`` (parsed as ``(a + b) + c``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [*_added(node.left), *_added(node.right)]
    return [node]


@pytest.mark.parametrize("path", PAGE_CODE, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_every_value_in_the_markup_the_code_writes_is_escaped(path: Path):
    """Every page builder passes what it did not write itself through ``markup.text``/``attr``/``anchor`` (issue
    60: a batch named ``<img src=x onerror=...>`` ran script in every annotator's page, a served model's id with
    U+202E reversed the report around it). The rule is ``safe_in_markup``; a value the code built as markup is
    named ``..._html``."""
    found = unescaped_values(ast.parse(path.read_text(encoding="utf-8")))
    assert not found, "\n".join(f"{path.name}:{node.lineno}: {ast.unparse(node)} is put into markup unescaped; wrap "
                                "it in markup.text/attr/anchor (or name markup the code built ..._html)"
                                for node in found)  # fmt: skip


def test_the_markup_rule_catches_the_issues_finding():
    """The checker itself: the annotation app's line that wrote a batch's name into the page fails it; escaped, it
    passes."""
    finding = ast.parse("w.HTML(f\"<p class='wb-muted'>{member.name} · batch {member.batch.name}</p>\")")
    assert [ast.unparse(node) for node in unescaped_values(finding)] == ["member.name", "member.batch.name"]
    fixed = ast.parse('w.HTML(f"<p>{markup.text(member.name)} · {n_done:,} of {total_html}</p>")')
    assert unescaped_values(fixed) == []
    assert [ast.unparse(node) for node in unescaped_values(ast.parse('"<b>" + label + "</b>"'))] == ["label"]
    template = ast.parse('PAGE = "<p>{x}</p>"\nPAGE.format(x=name)\nPAGE.format(x=markup.text(name))')
    assert [ast.unparse(node) for node in unescaped_values(template)] == ["name"]
