"""A published suite's own helper modules, found from the file that imports them.

KernelBench-X's test code imports `data_utils` from the suite's `utils/` folder, reaching it with
`sys.path.append` relative to the working directory or to the file. The judge loads a task in
several processes, from several places (the file itself, a read-only copy inside the worker's
sandbox), so a helper is found from the importing file alone:

- each top-level module name the file imports (`import x`, `from x import y`, anywhere in it)
  that is not the standard library's or installed is looked for beside the file, then in the folders up to `SEARCH_UP` levels above it; in each, as
  `x.py` or a package `x/` directly there or in one of its subfolders (`utils/x.py`);
- what a helper imports is resolved the same way from the helper, so the set is closed;
- while the task's code runs, `helper_finder` serves exactly those modules (first on
  `sys.meta_path`), each compiled from its source after the same rewrite as the task file (on the
  CPU, `"cuda"` devices become `"cpu"`), whatever `sys.path` and the working directory say.

`stage` copies a task file with its helpers into another folder, keeping their relative layout,
so the copy finds them the same way (the worker's read-only inputs folder).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.machinery
import importlib.util
import shutil
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from benchmarks import pyparse

SEARCH_UP = 2  # folders above the importing file's own that are searched
MAX_HELPER_FILES = 64  # a "helper" larger than this is a whole tree, not a helper: refused
# where installed modules are: sys.path as this process started, without the working directory
# (task code that appends to sys.path while it loads must not turn its helpers into "installed")
_INSTALLED_PATHS = [p for p in sys.path if p not in ("", ".")]


def imported_roots(tree: ast.AST) -> list[str]:
    """Top-level names of the absolute imports anywhere in `tree`, in order."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name.split(".", 1)[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module.split(".", 1)[0])
    return list(dict.fromkeys(names))


def _candidates(folder: Path, name: str) -> Iterator[Path]:
    yield folder / f"{name}.py"
    yield folder / name
    try:
        subs = sorted(
            p for p in folder.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
        )
    except OSError:
        return
    for sub in subs:
        yield sub / f"{name}.py"
        yield sub / name


def _is_module(path: Path) -> bool:
    if path.suffix == ".py":
        return path.is_file()
    return path.is_dir() and (path / "__init__.py").is_file()


def find_helper(importer: Path, name: str) -> Path | None:
    """The helper module `name` as the file `importer` would reach it (a .py file or a package
    folder), or None when the suite has none (an installed module, or a missing one)."""
    folder = importer.resolve().parent
    for _ in range(SEARCH_UP + 1):
        for path in _candidates(folder, name):
            if _is_module(path) and path.resolve() != importer.resolve():
                return path.resolve()
        if folder.parent == folder:
            break
        folder = folder.parent
    return None


def _module_files(path: Path) -> list[Path]:
    if path.suffix == ".py":
        return [path]
    return sorted(p for p in path.rglob("*.py") if "__pycache__" not in p.parts)


def _installed(name: str) -> bool:
    """Whether `name` is the standard library's or an installed module (found on `sys.path`
    without the working directory): never a suite's helper."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return True
    try:
        return importlib.machinery.PathFinder.find_spec(name, _INSTALLED_PATHS) is not None
    except (ImportError, ValueError):
        return False


def helpers_of(path: Path, tree: ast.AST | None = None) -> dict[str, Path]:
    """Every helper module the file at `path` needs, by module name (the closure over what the
    helpers import in turn)."""
    path = path.resolve()
    found: dict[str, Path] = {}
    todo: list[tuple[Path, ast.AST]] = [(path, tree if tree is not None else _parse(path))]
    while todo:
        importer, node = todo.pop()
        for name in imported_roots(node):
            if name in found or _installed(name):
                continue
            helper = find_helper(importer, name)
            if helper is None:
                continue
            found[name] = helper
            for file in _module_files(helper):
                todo.append((file, _parse(file)))
            if sum(len(_module_files(h)) for h in found.values()) > MAX_HELPER_FILES:
                raise ValueError(
                    f"{path}: its import of {name!r} reaches {helper}, which holds over "
                    f"{MAX_HELPER_FILES} Python files: not a helper module"
                )
    return found


def _parse(path: Path) -> ast.AST:
    try:
        return pyparse.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError, OSError):
        return ast.Module(body=[], type_ignores=[])


def helper_files(helpers: dict[str, Path]) -> list[Path]:
    """The files of these helpers, each once."""
    return list(dict.fromkeys(f for h in helpers.values() for f in _module_files(h)))


def suite_root(path: Path, helpers: dict[str, Path]) -> Path:
    """The innermost folder holding the file and all its helpers."""
    folders = [path.resolve().parent] + [h.parent for h in helpers.values()]
    root = folders[0]
    while not all(f == root or root in f.parents for f in folders):
        root = root.parent
    return root


class _Loader(importlib.abc.Loader):
    def __init__(self, path: Path, rewrite: Callable[[ast.Module], ast.Module]) -> None:
        self.path, self.rewrite = path, rewrite

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        tree = self.rewrite(
            pyparse.parse(self.path.read_text(encoding="utf-8"), filename=str(self.path))
        )
        exec(compile(tree, str(self.path), "exec"), module.__dict__)  # noqa: S102 - the suite's own helper, trusted like its task file


class _Finder(importlib.abc.MetaPathFinder):
    """Serves the helper modules (and their submodules) from their files."""

    def __init__(
        self, helpers: dict[str, Path], rewrite: Callable[[ast.Module], ast.Module]
    ) -> None:
        self.helpers, self.rewrite = helpers, rewrite

    def find_spec(self, fullname: str, path: object = None, target: object = None):  # noqa: ANN201 - importlib protocol
        root, _, rest = fullname.partition(".")
        base = self.helpers.get(root)
        if base is None:
            return None
        where = base
        for part in rest.split(".") if rest else []:
            where = where / part
        if where.is_dir():
            init = where / "__init__.py"
            spec = importlib.util.spec_from_loader(
                fullname, _Loader(init, self.rewrite), origin=str(init), is_package=True
            )
            if spec is not None:
                spec.submodule_search_locations = [str(where)]
            return spec
        file = where if where.suffix == ".py" else where.with_suffix(".py")
        if not file.is_file():
            return None
        return importlib.util.spec_from_loader(
            fullname, _Loader(file, self.rewrite), origin=str(file)
        )


@contextmanager
def helper_finder(
    helpers: dict[str, Path], rewrite: Callable[[ast.Module], ast.Module]
) -> Iterator[None]:
    """While the block runs, `import name` of a helper loads it from its file (rewritten by
    `rewrite`). Modules of those names loaded from elsewhere (another suite's `data_utils`) are
    set aside first, so each suite gets its own; `sys.path` is restored afterwards (test code
    appends the suite's folders to it)."""
    saved_path = list(sys.path)
    if not helpers:
        try:
            yield
        finally:
            sys.path[:] = saved_path
        return
    for name in list(sys.modules):
        root = name.split(".", 1)[0]
        if root in helpers:
            origin = getattr(sys.modules[name], "__file__", None) or ""
            if not origin or not Path(origin).resolve().is_relative_to(helpers[root].parent):
                del sys.modules[name]
    finder = _Finder(helpers, rewrite)
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)
        sys.path[:] = saved_path


def stage(path: Path, folder: Path) -> Path:
    """A read-only copy of the task file at `path` in `folder`, with the helpers it imports at
    the same places relative to it; the path of the copy."""
    path = path.resolve()
    try:
        helpers = helpers_of(path)
    except ValueError:
        helpers = {}
    root = suite_root(path, helpers)
    folder.mkdir(parents=True, exist_ok=True)
    dest = folder / path.relative_to(root)
    for src in [path, *helper_files(helpers)]:
        target = folder / src.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            target.chmod(stat.S_IWUSR | stat.S_IRUSR)
        shutil.copyfile(src, target)
        target.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    return dest
