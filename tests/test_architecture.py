"""The house's shape (docs/ARCHITECTURE.md): layers import only the layers below them, the library never
imports the panels, ``import workbench as wb`` is fast and gives documented verbs."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS = [  # bottom to top; a module may import its own layer and the ones before it
    {"workbench", "workbench.errors", "workbench.schema", "workbench.paths", "workbench.io", "workbench.specs",
     "workbench.progress", "workbench.startup", "workbench.markup"},
    {"workbench.knowledge"},
    {"workbench.distractors", "workbench.probes"},
    {"workbench.scoring", "workbench.representations"},
    {"workbench.metrics", "workbench.baselines", "workbench.inoculation", "workbench.edge", "workbench.olmpics",
     "workbench.analysis", "workbench.sweep", "workbench.annotation", "workbench.irt"},
    {"workbench.views"},
    {"workbench.charts"},
    {"workbench.reports", "workbench.site", "workbench.course"},
    {"workbench.cli", "workbench.__main__"},
    {"widgets"},
]  # fmt: skip
LAYER_OF = {unit: number for number, units in enumerate(LAYERS) for unit in units}


def unit_of(module: str) -> str:
    """The layer unit of a dotted module name: ``workbench.probes.spec`` -> ``workbench.probes``."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "workbench" else parts[0]


def imports(path: Path) -> list[str]:
    """Every project module ``path`` imports, at the top or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names] if node.module == "workbench" else []
            found += [node.module, *names]
    return [name for name in found if name.split(".")[0] in ("workbench", "widgets") and name != "workbench"]


MODULES = sorted([*(ROOT / "workbench").rglob("*.py"), *(ROOT / "widgets").rglob("*.py")])


@pytest.mark.parametrize("path", MODULES, ids=lambda path: str(path.relative_to(ROOT)))
def test_a_module_never_imports_a_layer_above_it(path: Path):
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    own = LAYER_OF.get(unit_of(module))
    assert own is not None, f"{module} is in no layer; add its package to LAYERS and docs/ARCHITECTURE.md"
    above = [name for name in imports(path) if LAYER_OF.get(unit_of(name), -1) > own]
    assert not above, f"{module} (layer {own}) imports {above} from a layer above it"


def test_the_layer_check_fails_on_an_upward_import(tmp_path: Path):
    bad = tmp_path / "metrics.py"
    bad.write_text("def f():\n    from workbench.charts import heatmap\n    import widgets\n")
    found = [unit_of(name) for name in imports(bad)]
    assert found == ["workbench.charts", "widgets"]
    assert all(LAYER_OF[unit] > LAYER_OF["workbench.metrics"] for unit in found)


SCRIPT_FOLDERS = ("bench", "tests", "scripts")
"""Folders whose modules run with their own folder on ``sys.path``: they import one another by bare name
(``from references import rendered`` in bench/, ``from app_workspace import ...`` in tests/)."""


def python_files(root: Path) -> list[Path]:
    """Every Python file of the repository: the library, the panels, the apps, bench/, scripts/, tests/."""
    skip = {".venv", "workspace", "node_modules", "build", "dist"}
    return sorted(path for path in root.rglob("*.py") if not any(part in skip or part.startswith(".")
                  for part in path.relative_to(root).parts[:-1]))  # fmt: skip


def module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")


MODULE_FILES = {module_name(path, ROOT): path for path in python_files(ROOT)}


def module_imports(path: Path, known: dict[str, Path], local: str = "") -> set[str]:
    """The ``known`` modules ``path`` imports, at the top or inside a function: ``from a.b import c`` is ``a.b.c``
    if that is a module, else ``a.b``; a parent package imported only on the way to its module is not counted. A
    bare name is first looked for in ``local``, the script folder ``path`` lies in (``bench``: its own folder is on
    ``sys.path`` when it runs)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            for candidate in ([f"{local}.{name}"] if local else []) + [name]:
                while candidate and candidate not in known and candidate != local:
                    candidate = candidate.rpartition(".")[0]
                if candidate and candidate != local:
                    found.add(candidate)
                    break
    return found


def import_cycles(known: dict[str, Path]) -> list[list[str]]:
    """Each set of modules that import one another round a circle (strongly connected, more than one module)."""
    local = {module: module.rpartition(".")[0] if module.split(".")[0] in SCRIPT_FOLDERS else "" for module in known}
    graph = {module: module_imports(path, known, local[module]) - {module} for module, path in known.items()}
    order, low, stack, cycles = {}, {}, [], []

    def visit(module: str) -> None:  # Tarjan's algorithm
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in graph[module]:
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            members = stack[stack.index(module) :]
            del stack[stack.index(module) :]
            if len(members) > 1:
                cycles.append(sorted(members))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return cycles


def test_no_modules_anywhere_in_the_repository_import_each_other_round_a_circle():
    assert {name.split(".")[0] for name in MODULE_FILES} >= {"workbench", "widgets", "bench", "tests", "scripts"}
    assert import_cycles(MODULE_FILES) == [], "break the circle: move what both need into a module both import"


def test_the_cycle_check_finds_a_circle_even_through_a_function_level_import(tmp_path: Path):
    (tmp_path / "a.py").write_text("from pkg.b import g\n")
    (tmp_path / "b.py").write_text("import os\n\ndef g():\n    from pkg.c import h\n")
    (tmp_path / "c.py").write_text("import pkg.a\n")
    (tmp_path / "d.py").write_text("from pkg import a\n")
    known = {f"pkg.{name}": tmp_path / f"{name}.py" for name in "abcd"}
    assert import_cycles(known) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_the_cycle_check_finds_the_bench_circle_through_bare_names(tmp_path: Path):
    """bench_scoring.py and gpu_check.py once imported each other by bare name (bench/ on the path): found again
    if it comes back; a bare name resolves in the importer's own script folder first, so a module of the same name
    in tests/ is not mistaken for it."""
    for folder in ("bench", "tests"):
        (tmp_path / folder).mkdir()
    (tmp_path / "bench" / "bench_scoring.py").write_text("def f():\n    from gpu_check import rendered\n")
    (tmp_path / "bench" / "gpu_check.py").write_text("import bench_scoring\nimport workbench.io\n")
    (tmp_path / "tests" / "gpu_check.py").write_text("import bench_scoring\n")
    (tmp_path / "tests" / "bench_scoring.py").write_text("x = 1\n")
    known = {module_name(path, tmp_path): path for path in python_files(tmp_path)}
    assert import_cycles(known) == [["bench.bench_scoring", "bench.gpu_check"]]
    (tmp_path / "bench" / "bench_scoring.py").write_text("def f():\n    from references import rendered\n")
    assert import_cycles(known) == []


def test_import_workbench_loads_neither_torch_nor_altair_nor_the_panels():
    code = (
        "import sys, workbench as wb; "
        "print(sorted(name for name in ('torch', 'altair', 'ipywidgets', 'widgets') if name in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_library_has_no_alias_of_the_panels():
    import workbench

    with pytest.raises(AttributeError, match="no attribute 'widgets'"):
        workbench.widgets  # noqa: B018


def test_every_public_verb_resolves_and_has_parameters_returns_and_an_example():
    import inspect

    import workbench as wb

    for name in wb.__all__[2:]:
        value = getattr(wb, name)
        doc = inspect.getdoc(value) or ""
        assert ">>>" in doc, f"wb.{name} has no example"
        if inspect.isfunction(value):
            missing = [part for part in ("Parameters\n---", "Returns\n---", "Examples\n---") if part not in doc]
            assert not missing, f"wb.{name}'s docstring lacks {missing}"
    assert {"build_probes", "score", "report", "heatmap", "inoculate", "fit_pls"} <= set(dir(wb))


def test_a_verb_takes_a_spec_its_first_field_or_overrides_and_names_a_wrong_setting():
    from workbench.errors import SpecError
    from workbench.probes import ProbeSpec
    from workbench.specs import resolve_spec

    spec = ProbeSpec("hypernymy", max_hops=2)
    assert resolve_spec(ProbeSpec, "hypernymy", {"max_hops": 2}) == spec
    assert resolve_spec(ProbeSpec, spec, {}) is spec
    assert resolve_spec(ProbeSpec, spec, {"seed": 3}) == ProbeSpec("hypernymy", max_hops=2, seed=3)
    assert resolve_spec(ProbeSpec, None, {"probe": "synonymy"}) == ProbeSpec("synonymy")
    with pytest.raises(SpecError, match=r"max_hop is not a setting of ProbeSpec; choose from \['probe', 'max_hops'"):
        resolve_spec(ProbeSpec, "hypernymy", {"max_hop": 2})
    with pytest.raises(SpecError, match="probe is given twice"):
        resolve_spec(ProbeSpec, "hypernymy", {"probe": "synonymy"})
    with pytest.raises(SpecError, match="max_hops=9 is out of range"):
        resolve_spec(ProbeSpec, "hypernymy", {"max_hops": 9})
