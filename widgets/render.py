"""Small HTML fragments the panels show (every text escaped: nothing a visitor types is ever run)."""

from html import escape

import ipywidgets as w
import polars as pl

STYLE = (
    "<style>.wb-table{border-collapse:collapse;font-size:12px}"
    ".wb-table td,.wb-table th{border-bottom:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top;"
    "unicode-bidi:plaintext}"
    ".wb-right{color:#1a7f37;font-weight:600}.wb-wrong{color:#cf222e;font-weight:600}"
    ".wb-muted{color:#666}.wb-tree{font-family:monospace;font-size:12px;line-height:1.35}"
    ".wb-prompt{font-family:monospace;font-size:12px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:22em;"
    "overflow:auto;background:#f6f8fa;border:1px solid #ddd;padding:4px 6px;margin:2px 0}</style>"
)


def table(frame: pl.DataFrame, columns: list[str] | None = None, css_class: str = "wb-table") -> str:
    """``frame`` (or its ``columns``) as an escaped HTML table."""
    columns = columns or frame.columns
    head_html = "".join(f"<th>{escape(name)}</th>" for name in columns)
    body_html = "".join(
        "<tr>" + "".join(f"<td>{escape(_text(row[name]))}</td>" for name in columns) + "</tr>"
        for row in frame.select(columns).iter_rows(named=True)
    )
    head_html = f"<thead><tr>{head_html}</tr></thead>"
    return f'{STYLE}<table class="{escape(css_class)}">{head_html}<tbody>{body_html}</tbody></table>'


def _text(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if value == 0 or abs(value) >= 1e-3 else f"{value:.3g}"  # learning rates stay readable
    if isinstance(value, list):
        return " | ".join(map(str, value))
    return "" if value is None else str(value)


def readable_labels(widget: w.Widget) -> w.Widget:
    """Widen the label column of every labelled control below ``widget`` to fit its longest label (ipywidgets
    cuts labels at about 12 characters otherwise: "source m..."); returns ``widget``."""

    def controls(node: w.Widget):
        yield node
        for child in getattr(node, "children", ()):
            yield from controls(child)

    def has_label(control: w.Widget) -> bool:
        return bool(getattr(control, "description", "")) and hasattr(
            getattr(control, "style", None), "description_width"
        )

    labelled = [control for control in controls(widget) if has_label(control)]
    width = f"{max((len(c.description) for c in labelled), default=0) * 0.6 + 1:.1f}em"
    for control in labelled:
        control.style.description_width = width
    return widget


PROMPT_TAIL = 10
"""Lines of a prompt always shown (the asked question and its choices); earlier lines (instruction, shots) fold."""


def prompt_block(text: str, tail: int = PROMPT_TAIL) -> str:
    """``text`` (what a model saw) escaped in a scrollable monospace block; a prompt of more than ``tail`` lines
    shows its last ``tail`` and folds the earlier ones (instruction, shots, chat turns) under a summary to open."""
    lines = text.split("\n")
    last = "\n".join(lines[-tail:])
    shown_html = f"<pre class='wb-prompt'>{escape(last)}</pre>"
    if len(lines) <= tail:
        return shown_html
    earlier = "\n".join(lines[:-tail])
    return (
        f"<details class='wb-prompt-fold'><summary class='wb-muted'>{len(lines) - tail:,} earlier lines "
        f"({len(earlier):,} characters: instruction, shots, template)</summary>"
        f"<pre class='wb-prompt'>{escape(earlier)}</pre></details>{shown_html}"
    )


def offer(picker: w.Dropdown, options: list, value, busy: list[bool]) -> None:
    """Give ``picker`` its ``options`` and ``value``; meanwhile ``busy[0]`` is True, so that its observers can skip
    the option ipywidgets picks in between (the first); the caller draws for ``value`` itself."""
    busy[0] = True
    try:
        picker.options = options
        picker.value = value
    finally:
        busy[0] = False
