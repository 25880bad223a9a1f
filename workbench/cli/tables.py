"""How the command line prints frames: Markdown tables with every row and column, no dtypes, no shape."""

MARKDOWN = {
    "tbl_rows": -1,
    "tbl_cols": -1,
    "tbl_width_chars": 240,
    "fmt_str_lengths": 80,
    "tbl_formatting": "ASCII_MARKDOWN",
    "tbl_hide_dataframe_shape": True,
    "tbl_hide_column_data_types": True,
}


def markdown(frame, float_precision: int | None = None) -> str:
    """``frame`` as a Markdown table (floats rounded to ``float_precision`` places when given).

    >>> print(markdown(polars.DataFrame({"probe": ["hypernymy"], "accuracy": [0.61234]}), float_precision=3))
    | probe     | accuracy |
    |-----------|----------|
    | hypernymy | 0.612    |
    """
    import polars as pl  # here: `workbench --help` stays fast

    with pl.Config(**MARKDOWN, float_precision=float_precision):
        return str(frame)
