"""A batch as a Label Studio project, and a Label Studio export as votes: a crowd platform that works with Label
Studio does the paper's crowd step at scale, and its answers come back as votes of the batch.

``label_studio_project`` writes a labelling config (the question, its choices as a single-choice list, the three
flags, a comment) and one task per question; each task shows the choices in an order of its own (recorded in the
task, ``data.order``). ``import_label_studio`` reads Label Studio's JSON export ("JSON" in its export dialog, or
``GET /api/projects/ID/export?exportType=JSON``): one vote per completed annotation, cancelled (skipped) ones left
out, every field typed and bounded.

A voter is who the workbench knows them to be, never who the export says (issue 60): each Label Studio user id
(``completed_by``) is mapped, once, to an annotator of the batch (``voters``, ``--voter ID=NAME``); the batch keeps
the mapping (``label_studio_users``), a name not yet in the batch takes a free place as ``annotate link`` gives one,
and an export naming a user the batch does not know is refused in one line.

>>> label_studio_project(batch, "ls-project/")  # doctest: +SKIP
>>> import_label_studio(batch, "project-1-at-2026-11-28.json", voters={1: "ana", 2: "ben"})  # doctest: +SKIP
"""

import html
import json
import secrets
import warnings
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from workbench.annotation.batch import Batch, choice_order
from workbench.annotation.store import NAME, SCHEMA, connect
from workbench.annotation.votes import FLAGS, VOTE_SCHEMA, check_comment, digest
from workbench.errors import WorkbenchError
from workbench.io import check_output, mark_folder, staged_folder, write_text

PLACE = 0  # Label Studio shows every annotator the task's order: the batch's first place's
FILES = ["label_config.xml", "tasks.json"]
EXPORT_LIMIT = 1 << 30
"""The largest Label Studio export read (bytes): a 2,000-question batch with ten voters is a few megabytes."""
LEAD_TIME_LIMIT = 30 * 86_400.0
"""The longest time on a task taken (seconds): a task left open for a month is no measurement."""
USER_LIMIT = 2**63
ANSWER_SCHEMA = {"user": pl.Int64, **{name: dtype for name, dtype in VOTE_SCHEMA.items() if name != "annotator"}}
"""Label Studio's answers as the export gives them: ``user`` is its user id (who that is, ``import_label_studio``
decides); ``place`` is null until then."""
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
    flags = "\n".join(f'    <Choice value="{html.escape(text)}"/>' for text in FLAGS.values())
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
    """Write ``label_config.xml`` and ``tasks.json`` for Label Studio into the folder ``out``, marked as ours
    (``io.mark_folder``): a folder is replaced only when it is new, empty, or one this wrote (``io.check_output``;
    a user's own ``label_config.xml`` there is kept and the write refused)."""
    out = check_output(out, kind="label-studio", inputs=(batch.folder,))
    tasks = json.dumps(label_studio_tasks(batch), ensure_ascii=False, indent=1) + "\n"
    with staged_folder(out) as staging:
        mark_folder(staging, "label-studio", FILES)
        write_text(label_config(), staging / FILES[0])
        write_text(tasks, staging / FILES[1])
    return [out / name for name in FILES]


def _user(completed_by: object, where: str) -> int:
    """The Label Studio user id of an annotation (``completed_by``: the id, or a user object holding it); an e-mail
    or a name in the export is not an identity and is not read."""
    user = completed_by.get("id") if isinstance(completed_by, dict) else completed_by
    if type(user) is not int or not 0 <= user < USER_LIMIT:
        raise WorkbenchError(f"{where}: an annotation's completed_by is {str(user)[:40]!r}, not a Label Studio user "
                             "id; export the project again as JSON (every annotation names its user)")  # fmt: skip
    return user


def _strings(value: object, where: str, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise WorkbenchError(f"{where}: the {what} is not a list of texts; export the project again as JSON")
    return value


def _results(annotation: dict, where: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    results = annotation.get("result") or []
    if not isinstance(results, list):
        raise WorkbenchError(f"{where}: its result is not a list; export the project again as JSON")
    for result in results:
        value = result.get("value") if isinstance(result, dict) else None
        if not isinstance(value, dict):
            raise WorkbenchError(f"{where}: a result without a value; export the project again as JSON")
        name = result.get("from_name")
        if name in ("answer", "flags"):
            found[name] = _strings(value.get("choices", []), where, name)
        elif name == "comment":
            found[name] = _strings(value.get("text", []), where, name)
    return found


def _seconds(annotation: dict, where: str) -> float | None:
    seconds = annotation.get("lead_time")
    if seconds is None:
        return None
    if type(seconds) not in (int, float) or not 0 <= seconds <= LEAD_TIME_LIMIT:  # NaN, inf, 10**400 compare false
        raise WorkbenchError(f"{where}: its lead_time {str(seconds)[:40]!r} is no time on a task (0 to "
                             f"{LEAD_TIME_LIMIT:,.0f} seconds); fix it in the export or leave it out")  # fmt: skip
    return float(seconds)


def _at(annotation: dict, where: str) -> str:
    created = annotation.get("created_at")
    try:
        at = datetime.fromisoformat(created) if isinstance(created, str) and len(created) <= 40 else None
    except ValueError:
        at = None
    if at is None:
        raise WorkbenchError(f"{where}: its created_at {str(created)[:40]!r} is not a date and time; export the "
                             "project again as JSON")  # fmt: skip
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).astimezone(UTC).isoformat(timespec="milliseconds")


def _task_name(task: dict, index: int) -> str:
    number = task.get("id")
    return f"task {number}" if type(number) is int else f"task #{index + 1} (no id)"


def read_label_studio(batch: Batch, path: str | Path) -> pl.DataFrame:
    """The answers of a Label Studio JSON export of ``batch``'s project (``ANSWER_SCHEMA``, by Label Studio user id;
    source ``label-studio``): each answer held to what the task showed (its position among the task's choices, the
    choice's text, the order the batch gave the task), each field of its type and within its bounds; anything else
    is refused naming the task."""
    path = Path(path)
    try:
        if not path.is_file():
            raise OSError(f"{path.name} is {'missing' if not path.exists() else 'not a regular file'}")
        if path.stat().st_size > EXPORT_LIMIT:
            raise WorkbenchError(f"{path} is over {EXPORT_LIMIT >> 20:,} MiB: no Label Studio export of a batch is; "
                                 "export the project made from the batch as JSON")  # fmt: skip
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as err:
        raise WorkbenchError(f"{path} is not a Label Studio JSON export ({' '.join(str(err).split())[:120]}); "
                             "export the project as JSON") from err  # fmt: skip
    if not isinstance(tasks, list) or not all(isinstance(task, dict) for task in tasks):
        raise WorkbenchError(f"{path} is not a Label Studio JSON export (a list of tasks); export the project as JSON")
    questions = dict(batch.questions.select("id", "choices").iter_rows())
    flag_keys = {text: key for key, text in FLAGS.items()}
    rows, unanswered = [], 0
    for index, task in enumerate(tasks):
        data = task.get("data") if isinstance(task.get("data"), dict) else {}
        question, where = data.get("workbench_id"), f"{path}, {_task_name(task, index)}"
        if not isinstance(question, str) or question not in questions or data.get("batch") != batch.name:
            raise WorkbenchError(
                f"{where} is not a question of the batch {batch.name}; import the export of the project made from "
                "this batch (workbench annotate label-studio-export)"
            )
        choices = questions[question]
        order = choice_order(len(choices), PLACE, question, batch.seed)
        if data.get("order") != order:
            raise WorkbenchError(f"{where}: its choice order {str(data.get('order'))[:80]} is not the one the batch "
                                 f"gave it ({order}); the tasks were edited: export the batch again")  # fmt: skip
        annotations = task.get("annotations") or []
        for annotation in annotations if isinstance(annotations, list) else [None]:
            if not isinstance(annotation, dict):
                raise WorkbenchError(f"{where}: an annotation is not an object; export the project again as JSON")
            cancelled = annotation.get("was_cancelled")
            if cancelled not in (None, True, False):
                raise WorkbenchError(f"{where}: its was_cancelled is {str(cancelled)[:40]!r}, not true or false; "
                                     "export the project again as JSON")  # fmt: skip
            if cancelled:
                continue
            found = _results(annotation, where)
            if not found.get("answer"):
                unanswered += 1
                continue
            if len(found["answer"]) != 1:
                raise WorkbenchError(f"{where}: an annotation picks {len(found['answer'])} answers, not one; export "
                                     "the project again, or leave the task out")  # fmt: skip
            answer = found["answer"][0]
            shown = next((n for n, index in enumerate(order, start=1) if answer == _option(n, choices[index])["value"]),
                         None)  # fmt: skip
            if shown is None:
                raise WorkbenchError(f"{where}: the answer {answer[:60]!r} is none of the task's choices; export the "
                                     "project again, or leave the task out")  # fmt: skip
            unknown = [text for text in found.get("flags", []) if text not in flag_keys]
            if unknown:
                raise WorkbenchError(f"{where}: the flag {unknown[0][:60]!r} is none of the batch's "
                                     f"({', '.join(FLAGS.values())}); paste the batch's label_config.xml")  # fmt: skip
            rows.append(
                {"user": _user(annotation.get("completed_by"), where), "place": None, "id": question,
                 "choice": order[shown - 1], "shown": shown, "order": order,
                 "flags": sorted({flag_keys[text] for text in found.get("flags", [])}),
                 "comment": check_comment(" ".join(found.get("comment", [])), where),
                 "seconds": _seconds(annotation, where), "at": _at(annotation, where), "source": "label-studio"}
            )  # fmt: skip
    if unanswered:
        warnings.warn(f"{path}: {unanswered} annotation(s) neither skipped nor answered are left out", stacklevel=2)
    return pl.DataFrame(rows, schema=ANSWER_SCHEMA)


def parse_voters(pairs: list[str]) -> dict[int, str]:
    """``--voter ID=NAME`` options as {Label Studio user id: annotator name}, each checked."""
    voters: dict[int, str] = {}
    for pair in pairs:
        user, _, name = pair.partition("=")
        if not (user.isascii() and user.strip().isdigit()) or not name:
            raise WorkbenchError(f"--voter {pair[:60]!r} is not ID=NAME (a Label Studio user id, the annotator's "
                                 "name), e.g. --voter 1=ana")  # fmt: skip
        if int(user) in voters and voters[int(user)] != name:
            raise WorkbenchError(f"--voter names Label Studio user {int(user)} twice; give one name per user")
        voters[int(user)] = name
    return voters


@dataclass(frozen=True)
class Imported:
    """What an import did: votes ``added``, ``held`` already, ``repeated`` (a user's second answer to a task in the
    export: the first is kept), and the ``people`` who voted (batch annotators)."""

    added: int
    held: int
    repeated: int
    people: list[str]


def import_label_studio(batch: Batch, path: str | Path, voters: dict[int, str] | None = None) -> Imported:
    """Take a Label Studio export of ``batch``'s project as votes, each once however often imported.

    ``voters`` maps Label Studio user ids to annotators of the batch, added to the ones it keeps from earlier imports
    (a user is one name for good); a name not yet in the batch takes a free place (``annotate link`` gives it a link
    later). An export's user that no mapping names is refused in one line: a voter is who the workbench knows.
    """
    voters = dict(voters or {})
    for user, name in voters.items():
        if type(user) is not int or not 0 <= user < USER_LIMIT or not NAME.fullmatch(name):
            raise WorkbenchError(f"--voter {user}={name[:60]!r}: give a Label Studio user id and an annotator name "
                                 "(letters, digits, '.', '_', '-', '@'; 64 at most)")  # fmt: skip
    if len(set(voters.values())) != len(voters):
        raise WorkbenchError("--voter gives one name to two Label Studio users; each person is one user")
    answers = read_label_studio(batch, path)
    first = answers.sort("at", maintain_order=True).unique(["user", "id"], keep="first", maintain_order=True)
    repeated = answers.height - first.height
    if repeated:
        warnings.warn(f"{path}: {repeated} repeated answer(s) of one user to one task; the first of each is kept",
                      stacklevel=2)  # fmt: skip
    now = datetime.now(UTC).isoformat(timespec="seconds")
    with connect(batch.votes_path) as db:
        db.executescript(SCHEMA)  # a batch made before the mapping table gets it
        db.execute("BEGIN IMMEDIATE")
        try:
            known = dict(db.execute("SELECT user_id, name FROM label_studio_users").fetchall())
            places = dict(db.execute("SELECT name, place FROM annotators").fetchall())
            _check_mapping(voters, known)
            mapping = known | voters
            strangers = sorted(set(first["user"]) - set(mapping))
            if strangers:
                raise WorkbenchError(
                    f"{path}: Label Studio user {strangers[0]} (of {len(strangers)} unknown) is no voter of "
                    f"{batch.name}: say who they are with --voter {strangers[0]}=NAME (an annotator of the batch, or "
                    "a new name, which takes a free place)"
                )
            for user in sorted(set(first["user"])):
                name = mapping[user]
                if name not in places:
                    if len(places) >= batch.annotators:
                        raise WorkbenchError(f"the batch {batch.name} has {batch.annotators} annotator places and all "
                                             f"are taken, so {name} cannot vote; map Label Studio user {user} to a "
                                             "name already in it, or draw a batch with more --annotators")  # fmt: skip
                    places[name] = len(places)
                    db.execute("INSERT INTO annotators VALUES (?, ?, ?, ?)",
                               (places[name], name, digest(secrets.token_urlsafe(18)), now))  # fmt: skip
                if user not in known:
                    db.execute("INSERT INTO label_studio_users VALUES (?, ?, ?)", (user, name, now))
            rows = [
                (mapping[row["user"]], places[mapping[row["user"]]], row["id"], row["choice"], row["shown"],
                 json.dumps(row["order"]), json.dumps(row["flags"]), row["comment"], row["seconds"], row["at"],
                 row["source"])
                for row in first.iter_rows(named=True)
            ]  # fmt: skip
            before = db.execute("SELECT COUNT(*) FROM votes").fetchone()[0]
            db.executemany("INSERT OR IGNORE INTO votes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            added = db.execute("SELECT COUNT(*) FROM votes").fetchone()[0] - before
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    people = sorted({mapping[user] for user in first["user"]})
    return Imported(added=added, held=len(rows) - added, repeated=repeated, people=people)


def _check_mapping(voters: dict[int, str], known: dict[int, str]) -> None:
    """Refuse a ``--voter`` that renames a user the batch knows, or gives a known name to another user."""
    holder = {name: user for user, name in known.items()}
    for user, name in voters.items():
        if user in known and known[user] != name:
            raise WorkbenchError(f"Label Studio user {user} is {known[user]} in this batch (an earlier import); "
                                 f"give --voter {user}={known[user]} or leave it out")  # fmt: skip
        if holder.get(name, user) != user:
            raise WorkbenchError(f"{name} is Label Studio user {holder[name]} in this batch (an earlier import), not "
                                 f"{user}; each person is one user: give another name")  # fmt: skip
