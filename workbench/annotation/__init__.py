"""People in the loop: annotation batches, their votes, agreement, people's accuracy and the gold-standard test
(docs/ANNOTATION.md).

>>> from workbench.annotation import create_batch, add_annotator, record_vote, Vote, read_votes
"""

from workbench.annotation.agreement import agreement
from workbench.annotation.batch import Batch, batches, create_batch, open_batch
from workbench.annotation.people import (
    RULES,
    flag_problems,
    flag_table,
    gold_figures,
    gold_test,
    people_predictions,
    release_votes,
    workspace_flags,
    write_gold_jsonl,
)
from workbench.annotation.votes import (
    FLAGS,
    Vote,
    add_annotator,
    annotator,
    annotators,
    export_votes,
    find_annotator,
    read_votes,
    record_vote,
    review,
    todo,
)

__all__ = [
    "FLAGS", "RULES", "Batch", "Vote", "add_annotator", "agreement", "annotator", "annotators", "batches",
    "create_batch", "export_votes", "find_annotator", "flag_problems", "flag_table", "gold_figures", "gold_test",
    "open_batch", "people_predictions", "read_votes", "record_vote", "release_votes", "review", "todo",
    "workspace_flags", "write_gold_jsonl",
]  # fmt: skip
