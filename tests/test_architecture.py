"""Layering (SPEC §2): dependencies point downward only and the import graph has no
circle, the two stores own all SQL (sqlite3 only in ``storage/sqlite``, the PostgreSQL
driver only in ``storage/postgres``), the engine reads no clock, and no module grows past
what one reads in a sitting.

Layers, top to bottom (a layer may import its own and the ones below it, never those
above; every module of ``src/`` is in exactly one, see ``LAYERS``):

    entry points        the package root (its public names), cairn.memory (the Python API:
                        ``Memory(path)`` opens the engine), cairn.cli, cairn.server (the
                        HTTP API and the local daemon's serving side), cairn.mcp_server,
                        cairn.repair (``cairn doctor --repair``)
    composition root    cairn.compose, cairn.compose_postgres, cairn.compose_writes,
                        cairn.reembed, cairn.embedder_choice: config in, a provider out;
                        imported only by entry points
    interfaces          cairn.api (the Python API's parts and values, by purpose),
                        cairn.hooks (agent hooks), cairn.dashboard (mounted by the server)
    provider            cairn.provider (the contract, local and remote providers),
                        cairn.daemon (the provider over the local daemon, finding it,
                        starting and stopping it)
    services            cairn.services
    projection          cairn.projection (the Markdown files; what it reads and changes of
                        a memory is a protocol, so services and interfaces both use it)
    engine              cairn.engine
    storage             cairn.storage.ports (the ports) | the implementations beside them
    adapters            cairn.adapters
    foundation          model, errors, identifiers, timeutil, text, bm25, limits, config,
                        homes, validation (a package by purpose), patterns, visible
"""

from __future__ import annotations

import ast
from pathlib import Path

import cairn
import import_graph

PACKAGE = Path(cairn.__file__).parent
FOUNDATION = {
    "cairn.model",
    "cairn.errors",
    "cairn.identifiers",
    "cairn.timeutil",
    "cairn.text",
    "cairn.bm25",
    "cairn.limits",
    "cairn.config",
    "cairn.config_yaml",
    "cairn.homes",
    "cairn.validation",
    "cairn.patterns",
    "cairn.visible",
}
STORAGE_PORTS = {"cairn.storage.ports"}
MAX_PORT_METHODS = 12
MAX_LINES = 500

# Top first. A name is a module or a package (all of it); the root matches only itself.
LAYERS: list[tuple[str, set[str]]] = [
    (
        "entry points",
        {"cairn", "cairn.memory", "cairn.cli", "cairn.server", "cairn.mcp_server", "cairn.repair"},
    ),
    (
        "composition root",
        {
            "cairn.compose",
            "cairn.compose_postgres",
            "cairn.compose_writes",
            "cairn.reembed",
            "cairn.embedder_choice",
        },
    ),
    ("interfaces", {"cairn.api", "cairn.hooks", "cairn.dashboard"}),
    ("provider", {"cairn.provider", "cairn.daemon"}),
    ("services", {"cairn.services"}),
    ("projection", {"cairn.projection"}),
    ("engine", {"cairn.engine"}),
    ("storage", {"cairn.storage"}),
    ("adapters", {"cairn.adapters"}),
    ("foundation", FOUNDATION),
]
COMPOSITION = {"cairn.compose", "cairn.compose_postgres", "cairn.compose_writes"}

# Circles of module-level imports still there, each to be broken: the test fails on any
# other, and on one of these once it is gone (so the list only shrinks).
KNOWN_CYCLES: list[list[str]] = []  # none left: the handlers name the Engine protocol


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(p for p in parts if p != "__init__")


def imports_of(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def cairn_imports(path: Path) -> set[str]:
    return {m for m in imports_of(path) if m == "cairn" or m.startswith("cairn.")}


def modules_under(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def allowed(path: Path, *layers: str, extra: set[str] | frozenset[str] = frozenset()) -> None:
    for imported in cairn_imports(path):
        ok = under(imported, *FOUNDATION) or imported in extra or under(imported, *layers)
        assert ok, f"{module_name(path)} imports {imported}: against the layering"


def layer_of(name: str) -> int | None:
    """The rank of a module's layer (0 is the top), by its longest matching name."""
    best: tuple[int, int] | None = None
    for rank, (_, names) in enumerate(LAYERS):
        for entry in names:
            matches = name == entry or (entry != "cairn" and name.startswith(entry + "."))
            if matches and (best is None or len(entry) > best[0]):
                best = (len(entry), rank)
    return None if best is None else best[1]


def upward_imports(graph: import_graph.Graph) -> list[str]:
    """Every import of a module of a lower layer from one above it."""
    found = []
    for name, imported in sorted(graph.items()):
        here = layer_of(name)
        for target in sorted(imported):
            there = layer_of(target)
            if here is not None and there is not None and there < here:
                found.append(f"{name} ({LAYERS[here][0]}) imports {target} ({LAYERS[there][0]})")
    return found


def source_graphs() -> tuple[import_graph.Graph, import_graph.Graph]:
    return import_graph.graphs(import_graph.package_sources(PACKAGE), "cairn")


def test_every_module_is_in_a_layer_and_no_import_runs_back_up() -> None:
    """Every import counts here, a deferred one inside a function and a type-only one too."""
    _, every = source_graphs()
    homeless = sorted(name for name in every if layer_of(name) is None)
    assert not homeless, f"modules in no layer of LAYERS: {homeless}"
    up = upward_imports(every)
    assert not up, "imports running back up a layer:\n" + "\n".join(up)


def test_the_import_graph_has_no_circle() -> None:
    """Module-level imports, those under ``if TYPE_CHECKING:`` included (a type named from
    another module is a dependency on it); a deferred import inside a function is not an
    edge here (it obeys the layering above, so it can close a circle only within one
    layer)."""
    top, _ = source_graphs()
    found = import_graph.cycles(top)
    new = [c for c in found if c not in KNOWN_CYCLES]
    assert not new, "import circles:\n" + "\n".join(" <-> ".join(c) for c in new)
    gone = [c for c in KNOWN_CYCLES if c not in found]
    assert not gone, f"no longer a circle, take it out of KNOWN_CYCLES: {gone}"


def test_the_composition_root_is_imported_only_by_entry_points() -> None:
    _, every = source_graphs()
    importers = {name for name, imported in every.items() if imported & COMPOSITION}
    assert importers, "nothing imports the composition root: the check reads no import"
    for name in sorted(importers):
        assert layer_of(name) in (0, layer_of("cairn.compose")), (
            f"{name} imports the composition root: only entry points may"
        )


def test_the_checks_fail_on_what_they_forbid() -> None:
    """The checks themselves, on made-up modules: a type-only circle is found, a deferred
    import is no circle but is a dependency, and an import up a layer is reported."""
    sources = {
        "cairn.engine.a": "from cairn.engine.b import x\n",
        "cairn.engine.b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from cairn.engine.a import y\n",
        "cairn.engine.c": "def f():\n    from cairn.services.d import z\n",
        "cairn.services.d": "from cairn.engine.c import f\n",
        "cairn.model": "from cairn import __version__\n",
    }
    top, every = import_graph.graphs(sources, "cairn")
    assert import_graph.cycles(top) == [["cairn.engine.a", "cairn.engine.b"]]
    assert import_graph.cycles(every) == [
        ["cairn.engine.a", "cairn.engine.b"],
        ["cairn.engine.c", "cairn.services.d"],
    ]
    assert upward_imports(every) == ["cairn.engine.c (engine) imports cairn.services.d (services)"]
    assert every["cairn.model"] == set()  # the version constant is no edge


def test_foundation_imports_only_foundation() -> None:
    for name in FOUNDATION:
        path = PACKAGE / name.removeprefix("cairn.").replace(".", "/")
        for module in sorted(path.rglob("*.py")) if path.is_dir() else [path.with_suffix(".py")]:
            allowed(module)


def test_adapters_import_only_foundation() -> None:
    for path in modules_under("adapters"):
        allowed(path, "cairn.adapters")


def test_the_storage_ports_know_no_implementation() -> None:
    ports = modules_under("storage/ports")
    assert ports, "the storage ports are missing"
    for path in ports:
        allowed(path, "cairn.storage.ports")


def _is_protocol(node: ast.ClassDef) -> bool:
    def name(base: ast.expr) -> str:
        if isinstance(base, ast.Subscript):  # Protocol[T]
            return name(base.value)
        if isinstance(base, ast.Attribute):
            return base.attr
        return base.id if isinstance(base, ast.Name) else ""

    return any(name(b) == "Protocol" for b in node.bases)


# The two sums of roles: what a backend implements (every read role, and its transactions)
# and one transaction (every write role). Each declares at most the one method that opens
# the sum; every role it joins is held to the limit.
SUMS = {"RecordStore": {"transaction"}, "RecordTransaction": set()}


def _own_methods(node: ast.ClassDef) -> list[str]:
    return [
        n.name
        for n in node.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        and not (n.name.startswith("__") and n.name.endswith("__"))
    ]


def _base_names(node: ast.ClassDef) -> list[str]:
    return [
        b.attr if isinstance(b, ast.Attribute) else b.id
        for b in node.bases
        if isinstance(b, ast.Attribute | ast.Name)
    ]


def protocols_of(paths: list[Path]) -> dict[str, tuple[set[str], list[str]]]:
    """Every Protocol class in ``paths``: its own methods and the names of its bases."""
    found: dict[str, tuple[set[str], list[str]]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and _is_protocol(node):
                found[node.name] = (set(_own_methods(node)), _base_names(node))
    return found


def wide_protocols(paths: list[Path]) -> list[str]:
    """The Protocols of ``paths`` with more than 12 methods, counting every method of the
    protocols they join (a role made of roles is one role to whoever takes it)."""
    protocols = protocols_of(paths)

    def methods(name: str) -> set[str]:
        own, bases = protocols.get(name, (set(), []))
        return own.union(*(methods(b) for b in bases if b in protocols))

    wide = []
    for name, (own, bases) in sorted(protocols.items()):
        if name in SUMS:  # a sum of roles: each of its roles is counted on its own
            if not own <= SUMS[name] or not all(b in protocols for b in bases if b != "Protocol"):
                wide.append(f"{name} declares {sorted(own)} beyond the roles it joins")
            continue
        count = len(methods(name))
        if count > MAX_PORT_METHODS:
            wide.append(f"{name} has {count} methods")
    return wide


def test_no_port_or_role_has_more_than_twelve_methods(tmp_path: Path) -> None:
    """A port is one role of at most 12 methods, every method of the roles it joins counted
    (``services/store_roles.py`` joins ports for each service). Only the two sums of roles,
    :data:`SUMS`, are wider, and no service names the first (test below)."""
    every = sorted(PACKAGE.rglob("*.py"))
    protocols = protocols_of(every)
    assert len(protocols) >= 30 and {"RecordsAndLookups", "TaskReads", "Records"} <= set(
        protocols
    ), "the ports and roles were not found"
    assert wide_protocols(every) == []
    # The check fails on what it forbids: 13 methods of its own, or two roles joined past 12.
    wide = tmp_path / "wide.py"
    thirteen = "".join(f"    def m{i}(self) -> None: ...\n" for i in range(13))
    seven = "".join(f"    def a{i}(self) -> None: ...\n" for i in range(7))
    six = "".join(f"    def b{i}(self) -> None: ...\n" for i in range(6))
    wide.write_text(
        "from typing import Protocol\n"
        f"class Thirteen(Protocol):\n{thirteen}"
        f"class Seven(Protocol):\n{seven}"
        f"class Six(Protocol):\n{six}"
        "class Joined(Seven, Six, Protocol):\n    pass\n"
        "class RecordStore(Seven, Protocol):\n    def extra(self) -> None: ...\n",
        encoding="utf-8",
    )
    assert wide_protocols([wide]) == [
        "Joined has 13 methods",
        "RecordStore declares ['extra'] beyond the roles it joins",
        "Thirteen has 13 methods",
    ]


def test_storage_implementations_never_import_the_layers_above() -> None:
    for path in modules_under("storage"):
        allowed(path, "cairn.storage")


def test_engine_speaks_the_ports_never_an_implementation() -> None:
    for path in modules_under("engine"):
        allowed(path, "cairn.engine", "cairn.adapters", extra=STORAGE_PORTS)


def test_the_projection_imports_only_the_foundation() -> None:
    for path in modules_under("projection"):
        allowed(path, "cairn.projection")


def test_services_depend_on_the_engine_and_the_ports_only() -> None:
    for path in modules_under("services"):
        allowed(
            path,
            "cairn.services",
            "cairn.engine",
            "cairn.projection",
            "cairn.adapters",
            extra=STORAGE_PORTS,
        )


def services_naming_the_whole_store(paths: list[Path]) -> list[str]:
    """The modules among ``paths`` that name ``RecordStore`` anywhere (an import, a hint)."""
    return [p.name for p in paths if "RecordStore" in p.read_text(encoding="utf-8")]


def test_services_take_the_store_roles_they_use_never_the_whole_store(tmp_path: Path) -> None:
    assert services_naming_the_whole_store(modules_under("services")) == []
    wide = tmp_path / "wide.py"  # the check fails on what it forbids
    wide.write_text("from cairn.storage.ports import RecordStore\n", encoding="utf-8")
    assert services_naming_the_whole_store([wide]) == ["wide.py"]


def test_the_provider_sits_over_the_services() -> None:
    for path in [*modules_under("provider"), *modules_under("daemon")]:
        allowed(
            path,
            "cairn.provider",
            "cairn.daemon",
            "cairn.services",
            "cairn.engine",
            "cairn.adapters",
            extra=STORAGE_PORTS | {"cairn"},  # cairn.__version__ for status
        )


def test_interfaces_go_through_the_provider() -> None:
    interfaces = [
        PACKAGE / "memory.py",
        *modules_under("api"),
        *modules_under("cli"),
        *modules_under("hooks"),
        *modules_under("mcp_server"),
    ]
    for path in interfaces:
        # The engine's value types (RecallResult, the formatter) and the adapters'
        # protocols are shared; storage and services are reached only through a provider,
        # which a composition root (cairn.compose) builds.
        allowed(
            path,
            "cairn.memory",
            "cairn.api",
            "cairn.cli",
            "cairn.projection",
            "cairn.hooks",
            "cairn.mcp_server",
            "cairn.provider",
            "cairn.daemon",
            "cairn.compose",
            "cairn.embedder_choice",  # the composition root's: which model a store records
            "cairn.repair",  # cairn doctor --repair
            "cairn.engine",
            "cairn.adapters",
            "cairn.server",
            extra={"cairn"},  # cairn.__version__
        )
        for imported in cairn_imports(path):
            assert not under(imported, "cairn.storage", "cairn.services"), (
                f"{module_name(path)} imports {imported}: interfaces go through the provider"
            )


def test_the_server_speaks_only_the_provider_contract() -> None:
    """The HTTP API is an interface like the CLI: it reaches the engine through providers
    that a composition root builds (cairn.compose, from cairn.server.run), never through
    the services, the engine or a store."""
    for path in modules_under("server"):
        # cairn.hooks: the local daemon runs a whole agent hook on its warm engine
        allowed(
            path, "cairn.server", "cairn.provider", "cairn.daemon", "cairn.hooks",
            "cairn.compose", "cairn.dashboard", extra={"cairn"},
        )  # fmt: skip
    app = PACKAGE / "server" / "app.py"
    assert not any(under(m, "cairn.compose") for m in cairn_imports(app)), (
        "the app gets its engine from the composition root; it does not build one"
    )


def test_the_dashboard_reaches_memory_only_through_the_provider_contract() -> None:
    """The dashboard is an interface: every page reads and writes through a provider the
    server binds to the visitor's tenant — never a service, the engine, a store, the
    composition root, or the server's internals (it is handed what it needs)."""
    dashboard = modules_under("dashboard")
    assert dashboard, "the dashboard package is missing"
    for path in dashboard:
        allowed(path, "cairn.dashboard", "cairn.provider")
        for imported in cairn_imports(path):
            assert not under(imported, "cairn.provider.local", "cairn.provider.learning"), (
                f"{module_name(path)} imports {imported}: only the contract, not a provider"
            )


def test_only_the_remote_provider_and_the_server_speak_http() -> None:
    # The optional LLM adapter is an outside boundary of its own: it calls a chat API; the
    # MCP server's streamable HTTP transport runs on the SDK's own ASGI stack.
    speakers = (PACKAGE / "provider" / "remote.py", PACKAGE / "adapters" / "llm.py")
    for path in PACKAGE.rglob("*.py"):
        if path in speakers or any(
            path.is_relative_to(PACKAGE / name) for name in ("server", "mcp_server", "dashboard")
        ):
            continue
        found = {m.split(".")[0] for m in imports_of(path)}
        assert not found & {"httpx", "fastapi", "starlette", "uvicorn"}, (
            f"{module_name(path)} imports an HTTP library"
        )


def test_hooks_and_mcp_reach_memory_only_through_a_provider_they_are_given() -> None:
    """The agent hooks and the MCP server never open a store or import the command line:
    the provider they use comes from the one function every interface opens memory with
    (cairn.cli.app.open_memory), so switching it to the daemon switches them too."""
    for path in [*modules_under("hooks"), *modules_under("mcp_server")]:
        for imported in cairn_imports(path):
            assert not under(imported, "cairn.compose", "cairn.cli", "cairn.memory"), (
                f"{module_name(path)} imports {imported}: it must be handed a provider"
            )
    for path in [*modules_under("cli"), *modules_under("hooks"), *modules_under("mcp_server")]:
        if "cairn.compose" in cairn_imports(path):
            assert module_name(path) == "cairn.cli.app", (
                f"{module_name(path)} opens a provider itself: use cairn.cli.app.open_memory"
            )


def test_only_the_sqlite_store_runs_sql() -> None:
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "storage" / "sqlite"):
            continue
        assert "sqlite3" not in imports_of(path), f"{module_name(path)} imports sqlite3"


def test_only_the_postgres_store_speaks_to_postgresql() -> None:
    drivers = ("psycopg", "psycopg_pool", "psycopg2")
    for path in PACKAGE.rglob("*.py"):
        if path.is_relative_to(PACKAGE / "storage" / "postgres"):
            continue
        found = {m for m in imports_of(path) if m.split(".")[0] in drivers}
        assert not found, f"{module_name(path)} imports {sorted(found)}"


def test_the_engine_never_reads_the_clock() -> None:
    """Stages take ``now`` as an argument; only timing (perf_counter) may be read."""
    for path in modules_under("engine"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("now", "utcnow", "today"):
                assert not (
                    isinstance(node.value, ast.Name) and node.value.id in ("datetime", "date")
                ), f"{module_name(path)} reads the clock ({node.value.id}.{node.attr})"
            if isinstance(node, ast.Name) and node.id == "utc_now":
                raise AssertionError(f"{module_name(path)} reads the clock (utc_now)")
            if isinstance(node, ast.Attribute) and node.attr == "time":
                assert not (isinstance(node.value, ast.Name) and node.value.id == "time"), (
                    f"{module_name(path)} reads the wall clock (time.time)"
                )


def test_no_module_is_longer_than_one_sitting() -> None:
    long = {
        module_name(p): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_public_api_is_pinned() -> None:
    assert cairn.__all__ == sorted(cairn.__all__, key=str.lower) or cairn.__all__ == sorted(
        cairn.__all__
    )
    assert set(cairn.__all__) == {
        "Application",
        "CairnError",
        "Candidate",
        "Config",
        "ConfigError",
        "Conflict",
        "Event",
        "InvalidInput",
        "Memory",
        "MemoryInput",
        "NotFound",
        "RecallResult",
        "Record",
        "StorageError",
        "Tombstone",
        "__version__",
        "load_config",
    }
    for name in cairn.__all__:
        assert hasattr(cairn, name)
    assert (PACKAGE / "py.typed").exists()


def test_requests_reach_a_provider_only_through_the_client() -> None:
    """Every route sends through :class:`cairn.provider.client.Client` (its one-line
    refusal, attribution, warnings and answer type): only the client, and the daemon's
    provider that forwards to the daemon or to the engine in process, hand a request to a
    provider's ``query``/``apply`` themselves. ``Client.query/apply`` take the request's
    model and the answer's type; a provider's take one request."""
    forwarding = {PACKAGE / "provider" / "client.py", PACKAGE / "daemon" / "client.py"}
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in forwarding or path.is_relative_to(PACKAGE / "adapters"):  # a model's query
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("query", "apply")
                and len(node.args) == 1
                and not node.keywords
            ):
                found.append(f"{module_name(path)}:{node.lineno} {ast.unparse(node)[:70]}")
    assert not found, "a request sent around the client:\n" + "\n".join(found)
