"""A batch as a Label Studio project, and a Label Studio export as votes: a crowd platform that works with Label
Studio does the paper's crowd step at scale, and its answers come back as votes of the batch.

``label_studio_project`` writes a labelling config (the question, its choices as a single-choice list, the three
flags, a comment) and one task per question; each task shows the choices in an order of its own (recorded in the
task, ``data.order``). ``import_label_studio`` reads Label Studio's JSON export ("JSON" in its export dialog, or
``GET /api/projects/ID/export?exportType=JSON``): one vote per completed annotation, the annotator named by
Label Studio's user (``completed_by``: ``label-studio-N`` from the user id Label Studio 1.23 writes, or the e-mail of
a user object), cancelled (skipped) annotations left out.

>>> label_studio_project(batch, "ls-project/")  # doctest: +SKIP
>>> import_label_studio(batch, "project-1-at-2026-11-28.json")  # doctest: +SKIP
"""

import json
from pathlib import Path
from xml.sax.saxutils import quoteattr

import polars as pl

from workbench.annotation.batch import Batch, choice_order
from workbench.annotation.votes import FLAGS, VOTE_SCHEMA
from workbench.errors import WorkbenchError
from workbench.io import write_text

PLACE = 0  # Label Studio shows every annotator the task's order: the batch's first place's
CONFIG = """<View>
  <Header value="Question $position of $total"/>
  <Text name="question" value="$question"/>
  <Choices name="answer" toName="question" choice="single-radio" value="$options" required="true"
           showInline="false"/>
  <Choices name="flags" toName="question" choice="multiple">
{flags}
  </Choices>
  <TextArea name="comment" toName="question" rows="2" maxSubmissions="1" placeholder="A comment (optional)"/>
</View>
"""


def label_config() -> str:
    """The Label Studio labelling config of a batch: question, single-choice answer, flags, comment."""
    flags = "\n".join(f"    <Choice value={quoteattr(text)}/>" for text in FLAGS.values())
    return CONFIG.format(flags=flags)


def _option(position: int, text: str) -> dict[str, str]:
    return {"value": f"{position}. {text}"}


def label_studio_tasks(batch: Batch) -> list[dict]:
    """One Label Studio task per question of ``batch``: its stem, its choices in the task's order (``options``,
    each "N. text"), and what maps an answer back (``workbench_id``, ``order``)."""
    questions = batch.questions.sort("id")
    tasks = []
    for position, row in enumerate(questions.iter_rows(named=True), start=1):
        order = choice_order(len(row["choices"]), PLACE, row["id"], batch.seed)
        tasks.append(
            {
                "data": {
                    "workbench_id": row["id"], "batch": batch.name, "position": position, "total": questions.height,
                    "question": row["question"], "order": order,
                    "options": [_option(shown, row["choices"][index]) for shown, index in enumerate(order, start=1)],
                }
            }
        )  # fmt: skip
    return tasks


def label_studio_project(batch: Batch, out: str | Path) -> list[Path]:
    """Write ``label_config.xml`` and ``tasks.json`` for Label Studio into the folder ``out``."""
    out = Path(out)
    return [
        write_text(label_config(), out / "label_config.xml"),
        write_text(json.dumps(label_studio_tasks(batch), ensure_ascii=False, indent=1) + "\n", out / "tasks.json"),
    ]


def _person(completed_by: object, where: str) -> str:
    """The voter's name: ``label-studio-N`` from Label Studio's user id, or a user object's e-mail, held to the
    names ``workbench annotate link`` takes (an e-mail with a bidi override would become a model label)."""
    from workbench.annotation.votes import NAME

    if isinstance(completed_by, dict):
        completed_by = completed_by.get("email") or completed_by.get("id")
        name = str(completed_by)
    else:
        name = f"label-studio-{completed_by}"
    if not NAME.fullmatch(name):
        raise WorkbenchError(f"{where}: the annotator {name!r} is not a usable name (letters, digits, '.', '_', '-', "
                             "'@'); fix the user in Label Studio or the export")  # fmt: skip
    return name


def _results(annotation: dict, where: str) -> dict[str, list]:
    found: dict[str, list] = {}
    results = annotation.get("result") or []
    if not isinstance(results, list):
        raise WorkbenchError(f"{where}: its result is not a list; export the project again as JSON")
    for result in results:
        value = result.get("value") if isinstance(result, dict) else None
        if not isinstance(value, dict):
            raise WorkbenchError(f"{where}: a result without a value; export the project again as JSON")
        found[str(result.get("from_name", ""))] = value.get("choices") or value.get("text") or []
    return found


def read_label_studio(batch: Batch, path: str | Path) -> pl.DataFrame:
    """The votes of a Label Studio JSON export of ``batch``'s project (``VOTE_SCHEMA``; source ``label-studio``):
    each answer held to what the task showed (its position among the task's choices, the choice's text, the order
    the batch gave the task); anything else is refused naming the task."""
    path = Path(path)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise WorkbenchError(f"{path} is not a Label Studio JSON export ({err}); export the project as JSON") from err
    if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
        raise WorkbenchError(f"{path} is not a Label Studio JSON export (a list of tasks); export the project as JSON")
    questions = dict(batch.questions.select("id", "choices").iter_rows())
    flag_keys = {text: key for key, text in FLAGS.items()}
    rows = []
    for task in tasks:
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        question, where = data.get("workbench_id"), f"{path}, task {task.get('id')}"
        if question not in questions or data.get("batch") != batch.name:
            raise WorkbenchError(
                f"{where} is not a question of the batch {batch.name}; import the export of the project made from "
                "this batch (workbench annotate label-studio-export)"
            )
        choices = questions[question]
        order = choice_order(len(choices), PLACE, question, batch.seed)
        if data.get("order") != order:
            raise WorkbenchError(f"{where}: its choice order {data.get('order')} is not the one the batch gave it "
                                 f"({order}); the tasks were edited: export the batch again")  # fmt: skip
        annotations = task.get("annotations") or []
        for annotation in annotations if isinstance(annotations, list) else [None]:
            if not isinstance(annotation, dict):
                raise WorkbenchError(f"{where}: an annotation is not an object; export the project again as JSON")
            if annotation.get("was_cancelled"):
                continue
            found = _results(annotation, where)
            if not found.get("answer"):
                continue
            answer = str(found["answer"][0])
            shown = next((n for n, index in enumerate(order, start=1) if answer == _option(n, choices[index])["value"]),
                         None)  # fmt: skip
            if shown is None:
                raise WorkbenchError(f"{where}: the answer {answer[:60]!r} is none of the task's choices; export the "
                                     "project again, or leave the task out")  # fmt: skip
            seconds = annotation.get("lead_time")
            rows.append(
                {"annotator": _person(annotation.get("completed_by"), where), "place": PLACE, "id": question,
                 "choice": order[shown - 1], "shown": shown, "order": order,
                 "flags": sorted(flag_keys[text] for text in found.get("flags", []) if text in flag_keys),
                 "comment": " ".join(map(str, found.get("comment", []))),
                 "seconds": float(seconds) if isinstance(seconds, (int, float)) else None,
                 "at": str(annotation.get("created_at", "")), "source": "label-studio"}
            )  # fmt: skip
    frame = pl.DataFrame(rows, schema=VOTE_SCHEMA)
    return frame.sort("at").unique(["annotator", "id"], keep="first", maintain_order=True)
