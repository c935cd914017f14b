"""The house's arrows, read from the source: services depend on ``shared`` and never on each
other, ``shared`` never imports a service or a client, the pure parts of ``shared`` (records,
ports, parsing, stages) import no Google client, web framework or HTTP client, and no modules
import each other round in a circle (the benchmark scripts included)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "scrapejobs_shared": "shared/src",
    "scrapejobs_web": "libs/web/src",
    "scrapejobs_client": "libs/client/src",
    "scrapejobs_dispatcher": "services/dispatcher/src",
    "scrapejobs_worker": "services/worker/src",
    "scrapejobs_devstack": "tools/devstack/src",
    "scrapejobs_scale": "tools/scale/src",
}
SERVICES = ("scrapejobs_dispatcher", "scrapejobs_worker")
PURE = tuple(
    f"scrapejobs_shared.{folder}"
    for folder in (
        "domain",
        "ports",
        "extraction",
        "pipeline",
        "delivery",
        "firecrawl",
        "politeness",
        "messaging",
    )
)
INFRASTRUCTURE = ("google.cloud", "fastapi", "starlette", "httpx", "httpcore", "aiohttp")
MAX_MODULE_LINES = 500


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, src in PACKAGES.items():
        for path in (ROOT / src / package).rglob("*.py"):
            parts = path.relative_to(ROOT / src).with_suffix("").parts
            found[".".join(parts).removesuffix(".__init__")] = path
    for path in (ROOT / "bench").glob("*.py"):
        found[f"bench.{path.stem}"] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, at any depth of its code (an import inside a function
    still ties the two modules)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            named = [name for name in submodules if name in MODULES]
            yield from named or [node.module]


def _edges(module: str) -> set[str]:
    """The modules of ours ``module`` imports, leaving out its own packages (a package's
    ``__init__`` naming its modules is not a circle)."""
    ancestors = {module.rsplit(".", n)[0] for n in range(1, module.count(".") + 1)}
    return {
        name
        for name in _imports(MODULES[module])
        if name in MODULES and name != module and name not in ancestors
    }


def test_services_shared_and_clients_point_the_right_way() -> None:
    wrong = []
    for module, path in MODULES.items():
        top = module.split(".")[0]
        for name in _imports(path):
            target = name.split(".")[0]
            if top == "scrapejobs_shared" and target in (*SERVICES, "scrapejobs_client"):
                wrong.append(f"{module} -> {name}")
            if top in SERVICES and target in SERVICES and target != top:
                wrong.append(f"{module} -> {name}")
    assert not wrong, wrong


def test_pure_parts_of_shared_import_no_infrastructure() -> None:
    wrong = [
        f"{module} -> {name}"
        for module, path in MODULES.items()
        if module.startswith(PURE)
        for name in _imports(path)
        if name.startswith(INFRASTRUCTURE)
    ]
    assert not wrong, wrong


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for name in sorted(graph[module]):
            if state.get(name) == 1:
                circles.append([*path[path.index(name) :], name])
            elif name not in state:
                visit(name, [*path, name])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return circles


def test_no_import_circles() -> None:
    circles = _circles({module: _edges(module) for module in MODULES})
    assert not circles, circles


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c", "a"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


# Each package's first-level packages and modules in layers, the top first: a module imports
# only from layers below its own (never a sibling of its layer, never upwards), so the first
# level has no loop and a reader meets a package's words before its uses. A new first-level
# package or module takes its place here.
LAYERS: dict[str, list[tuple[str, ...]]] = {
    "scrapejobs_dispatcher": [
        ("main",),
        ("adapters",),
        ("settings",),
        ("ui",),
        ("firecrawl",),
        ("routes",),
        ("dependencies", "errors"),
        ("monitors", "uploads"),
        ("search",),  # above the submission it submits through
        ("submission",),  # jobs coming in, above jobs
        ("jobs",),
        ("rules", "system_health", "scheduling"),
        ("tenants", "edge"),
    ],
    "scrapejobs_worker": [
        ("main",),
        ("adapters",),
        ("settings", "routes", "language_models"),
        ("lanes",),
        ("batches", "delivery"),
        ("tasks",),
        ("crawl", "ai"),
        ("extraction", "rendering"),
        ("fetching",),
    ],
    "scrapejobs_shared": [
        ("adapters",),
        ("delivery", "politeness", "firecrawl", "outcomes", "tenant_pools"),
        ("ports", "observability"),
        ("config",),
        ("messaging",),
        ("domain",),
        ("options",),
        ("pipeline",),
        ("extraction",),
        ("processes", "tenant_turns"),
        ("errors",),
    ],
}


def _first_level_edges(package: str) -> dict[tuple[str, str], list[str]]:
    """(importer, imported) first-level names of ``package``, with the module imports that
    tie them."""
    edges: dict[tuple[str, str], list[str]] = {}
    for module in MODULES:
        if not module.startswith(f"{package}."):
            continue
        for name in _edges(module):
            if not name.startswith(f"{package}."):
                continue
            pair = (module.split(".")[1], name.split(".")[1])
            if pair[0] != pair[1]:
                edges.setdefault(pair, []).append(f"{module} -> {name}")
    return edges


def _against_layers(
    layers: list[tuple[str, ...]], edges: dict[tuple[str, str], list[str]]
) -> list[str]:
    layer_of = {name: depth for depth, names in enumerate(layers) for name in names}
    return [
        f"{importer} (layer {layer_of[importer]}) -> {imported} (layer {layer_of[imported]}): "
        f"{why[0]}"
        for (importer, imported), why in sorted(edges.items())
        if layer_of[imported] <= layer_of[importer]
    ]


def test_first_level_packages_are_layers() -> None:
    wrong = []
    for package, layers in LAYERS.items():
        listed = [name for names in layers for name in names]
        present = {module.split(".")[1] for module in MODULES if module.startswith(f"{package}.")}
        assert sorted(listed) == sorted(present), (package, set(listed) ^ present)
        wrong += _against_layers(layers, _first_level_edges(package))
    assert not wrong, wrong


def test_the_layer_check_finds_loops_and_upward_imports() -> None:
    loop = {("a", "b"): ["a.x -> b.y"], ("b", "a"): ["b.y -> a.z"]}
    assert len(_against_layers([("a",), ("b",)], loop)) == 1
    assert len(_against_layers([("a", "b")], {("a", "b"): ["a.x -> b.y"]})) == 1  # siblings
    assert _against_layers([("a",), ("b",)], {("a", "b"): ["a.x -> b.y"]}) == []


# The whole store only where a service's parts are composed; every other module holds the
# narrow ports it calls (ports/jobs.py, task_results.py, batch_store.py...; ports/job_store.py's
# JobReads and LaneStore for the readers and the lanes).
WHOLE_STORE_HOLDERS = {
    "scrapejobs_dispatcher": {"adapters", "jobs.job_parts"},
    "scrapejobs_worker": {"adapters"},
}


def test_services_hold_the_ports_they_use_not_the_whole_store() -> None:
    for package, allowed in WHOLE_STORE_HOLDERS.items():
        assert len(allowed) <= 2
        holders = {
            module.removeprefix(f"{package}.")
            for module, path in MODULES.items()
            if module.startswith(f"{package}.")
            and re.search(r"\bJobStore\b", path.read_text(encoding="utf-8"))
        }
        assert holders <= allowed, holders - allowed


# Where every option used to be written: an option family's fields are written in its own
# module (scrapejobs_shared/options), and these read them through the registry.
OPTION_READERS = (
    "scrapejobs_dispatcher.firecrawl.request_models",
    "scrapejobs_dispatcher.firecrawl.translation",
    "scrapejobs_dispatcher.firecrawl.format_models",
    "scrapejobs_dispatcher.firecrawl.format_translation",
    "scrapejobs_dispatcher.firecrawl.parse_routes",
    "scrapejobs_shared.domain.jobspec",
    "scrapejobs_dispatcher.rules.served_options",
)


def _written(path: Path, names: set[str]) -> list[str]:
    """Where ``path`` declares a field, reads an attribute or writes a string of ``names``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        elif isinstance(node, ast.Attribute):
            name = node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value
        elif isinstance(node, ast.keyword) and node.arg:
            name = node.arg
        else:
            continue
        if name in names:
            found.append(f"{path.name}:{node.lineno} {name}")
    return found


def _option_names() -> set[str]:
    from pydantic.alias_generators import to_camel

    from scrapejobs_shared.options import OPTIONS

    names = set()
    for family in OPTIONS.families:
        for fields in (*family.native_fields.values(), *family.firecrawl_fields.values()):
            for field, (_, info) in fields.items():
                names |= {field, info.alias or to_camel(field)}
    return names


def test_an_option_is_written_in_its_family_s_module_only() -> None:
    names = _option_names()
    assert {"location", "zero_data_retention", "zeroDataRetention"} <= names
    moved = {"content", "onlyMainContent", "documents", "parsers", "render", "waitFor", "actions"}
    assert moved | {"verify_tls", "skipTlsVerification", "maxAge", "per_host_rps", "delay"} <= names
    written = [found for module in OPTION_READERS for found in _written(MODULES[module], names)]
    assert written == []


def test_the_option_check_finds_an_option_written_outside_its_module(tmp_path: Path) -> None:
    module = tmp_path / "models.py"
    module.write_text("class Body:\n    location: str | None = None\n")
    assert _written(module, {"location"}) == ["models.py:2 location"]
    module.write_text('native = {"zeroDataRetention": body.zero_data_retention}\n')
    assert len(_written(module, {"zeroDataRetention", "zero_data_retention"})) == 2


def test_no_product_module_is_over_the_line_limit() -> None:
    long = {
        module: lines
        for module, path in MODULES.items()
        if not module.startswith("bench.")
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"split these by concept: {long}"


PRODUCT = ("scrapejobs_shared", "scrapejobs_web", "scrapejobs_dispatcher", "scrapejobs_worker")


def _product_errors() -> list[type[BaseException]]:
    """Every exception class the product's modules define (the client SDK keeps its own root:
    it is a separate package its users install alone)."""
    import importlib
    import inspect

    found = []
    for module in sorted(MODULES):
        if not module.startswith(PRODUCT):
            continue
        loaded = importlib.import_module(module)
        for _, value in inspect.getmembers(loaded, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__ == module:
                found.append(value)
    return found


def test_every_error_of_the_product_has_the_one_root() -> None:
    """One error tree (scrapejobs_shared/errors.py): each error the product raises belongs to
    a family that says how an API answers it, so one handler answers them all."""
    from scrapejobs_shared.errors import ScrapejobsError

    errors = _product_errors()
    assert len(errors) > 40  # they were found
    outside = [
        f"{e.__module__}.{e.__qualname__}" for e in errors if not issubclass(e, ScrapejobsError)
    ]
    assert outside == []


def test_one_handler_answers_the_project_s_errors() -> None:
    """The dispatcher maps errors to answers in one place: a handler for the root, none for
    its members one by one (the dashboard's pages and sign-in flow keep theirs)."""
    source = (ROOT / "services/dispatcher/src/scrapejobs_dispatcher/errors.py").read_text()
    handled = source.count("add_exception_handler(")
    assert handled == 2, handled  # the root, and requests that do not validate


# Ports and adapters over the house's limits, each at most as it is: the job store's split into
# narrow ports (issue 52) takes them off this list, and nothing may join it.
MAX_PORT_METHODS = 12
MAX_OUR_BASES = 2


def _classes_of(prefix: str) -> list[type]:
    import importlib
    import inspect

    found = []
    for module in sorted(MODULES):
        if module.startswith(prefix):
            loaded = importlib.import_module(module)
            found += [
                value
                for _, value in inspect.getmembers(loaded, inspect.isclass)
                if value.__module__ == module
            ]
    return found


def _ours(kind: type) -> bool:
    return kind.__module__.startswith("scrapejobs")


def test_no_port_is_wider_than_twelve_methods() -> None:
    """Each port declares at most twelve methods; a protocol built of ports (the job store's
    union, the one adapter's type) declares none of its own."""
    wide, unions = {}, {}
    for port in _classes_of("scrapejobs_shared.ports"):
        if not getattr(port, "_is_protocol", False):
            continue
        name = f"{port.__module__}.{port.__qualname__}"
        own = {n for n, value in vars(port).items() if not n.startswith("_") and callable(value)}
        ports = [k for k in port.__mro__[1:] if _ours(k) and getattr(k, "_is_protocol", False)]
        if ports and own:
            unions[name] = sorted(own)
        if len(own) > MAX_PORT_METHODS:
            wide[name] = len(own)
    assert wide == {} and unions == {}


def test_no_adapter_is_built_on_a_chain_of_more_than_two_of_our_classes() -> None:
    from scrapejobs_shared.errors import ScrapejobsError

    deep = {}
    for adapter in _classes_of("scrapejobs_shared.adapters"):
        if issubclass(adapter, BaseException | ScrapejobsError):
            continue
        bases = [
            k for k in adapter.__mro__[1:] if _ours(k) and not getattr(k, "_is_protocol", False)
        ]
        name = f"{adapter.__module__}.{adapter.__qualname__}"
        if len(bases) > MAX_OUR_BASES:
            deep[name] = len(bases)
    assert deep == {}
