"""The lean front door: the light command lines run without typer, rich or pydantic, printing the same bytes.

``run_light`` recognises exactly these command lines (each also after a root ``--lang ru|en``)::

    dealer  |  dealer --help  |  dealer -h                 (the help, from a cache typer filled; see below)
    dealer board N
    dealer deal show PBN [--lang ru|en] [--ascii]
    dealer bank status [--bank P] [--keys P] [--json]
    dealer regulation check [PATH]
    dealer bank import FILE… --json [--bank P] [--keys P] [--show N] [--max-size N] [--skip-bad] [--register P]

and computes their output with the same functions the typer commands call (``dealer.cli.light``). The typer
commands print through rich; here the same text is written as rich writes it: a line as it is, a table drawn
with rich's default box. Whatever rich would do differently (wrap a line wider than the console, shrink a table,
replace an ``:emoji:`` code, expand a tab, find no UTF-8 on the stream, colours off on a terminal) is a doubt,
and so is any other argument, option, value or error that is not the command's own: ``run_light`` then returns
None and the full typer app runs the command line from the start (the light commands only read, so nothing is
done twice). Nothing is printed before the whole output is known.

``bank import --json`` writes: its doubts are all settled before it opens the bank (the arguments, and reading
every file, which writes nothing), and from then on it never hands over to typer. An error of the bank is
printed as typer prints it, whatever its text; any other exception is raised (a second run would report the
batches already committed as duplicates).

The help is typer's own rendering: the first ``dealer --help`` in given conditions runs typer and keeps its
output in a cache file (``$DEALER_CACHE_DIR``, else ``$XDG_CACHE_HOME/bridge-dealer/``, else
``~/.cache/bridge-dealer/``); later ones print that file. The file's name is a hash of everything the
rendering depends on: the command line, the language, the console width, whether each stream is a terminal
(and its encoding), the environment variables rich and typer read, Python's version and environment
(``sys.prefix``), the project's version, and the size and modification time of every file of ``dealer/cli``
(the help texts and catalogues) and of the installed typer and rich. No cache directory that can be written:
typer renders every time.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .light import TableSpec

LANGS = ("ru", "en")
# environment variables that change what rich or typer print (their sources read these; a test checks the list)
RENDER_ENV = (
    "COLUMNS", "LINES", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
    "JUPYTER_COLUMNS", "JUPYTER_LINES", "DATABRICKS_RUNTIME_VERSION", "TERMINAL_WIDTH", "GITHUB_ACTIONS",
    "PY_COLORS", "_TYPER_FORCE_DISABLE_TERMINAL", "TYPER_USE_RICH", "TYPER_STANDARD_TRACEBACK",
    "_TYPER_STANDARD_TRACEBACK", "LC_ALL", "LC_MESSAGES", "LANG", "PYTHONIOENCODING", "PYTHONUTF8",
)  # fmt: skip


class Doubt(Exception):
    """This run might not print what typer prints: the full command line runs it instead."""


class Written(Exception):
    """An unexpected error after the command began to write: raised as it is, never run again by typer."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


Output = tuple[str, str, int]  # stdout, stderr, exit code


def run_light(argv: list[str]) -> int | None:
    """Run a light command line and return its exit code; None: not one (or a doubt), typer runs it."""
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in os.environ):
        return None  # shell completion asks click, not us
    rest = list(argv)
    if rest[:1] == ["--lang"] and len(rest) >= 2:
        root_lang: str | None = rest[1]
        rest = rest[2:]
    elif rest and rest[0].startswith("--lang="):
        root_lang = rest[0].removeprefix("--lang=")
        rest = rest[1:]
    else:
        root_lang = None
    if root_lang is not None and root_lang not in LANGS:
        return None
    if rest in ([], ["--help"], ["-h"]):
        return _help(argv)  # outside the net below: a failing help (a closed pipe) must not be shown twice
    try:
        from .i18n import cli_language, set_language

        set_language(cli_language(argv))
        run = _command(rest)
        if run is None:
            return None
        out, err, code = run()
    except Doubt:
        return None
    except Written as exc:  # the bank may hold part of the work: never run again
        raise exc.error from None
    except Exception:  # not a DealerError: typer runs the command again and shows what goes wrong as it does
        return None
    sys.stdout.write(out)
    sys.stdout.flush()
    if err:
        sys.stderr.write(err)
        sys.stderr.flush()
    return code


def _command(rest: list[str]) -> Callable[[], Output] | None:
    if len(rest) == 2 and rest[0] == "board":
        return lambda: _board(_int(rest[1]))
    if rest[:2] == ["deal", "show"]:
        return lambda: _deal_show(rest[2:])
    if rest[:2] == ["bank", "status"]:
        return lambda: _bank_status(rest[2:])
    if rest[:2] == ["regulation", "check"] and len(rest) <= 3:
        return lambda: _regulation_check(rest[2:])
    if rest[:2] == ["bank", "import"]:
        return lambda: _bank_import(rest[2:])
    return None


def _int(text: str) -> int:
    """A board number as typer reads it, for the plain spellings only (``7``, not ``+7``, ``07`` or `` 7``)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 9 or (len(text) > 1 and text[0] == "0"):
        raise Doubt
    return int(text)


def _options(args: list[str], flags: tuple[str, ...], valued: tuple[str, ...], positional: int) -> dict[str, str]:
    """Split ``args`` into options (each at most once) and up to ``positional`` arguments (keys "0", "1", …)."""
    found: dict[str, str] = {}
    count = 0
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if arg in flags and arg not in found:
            found[arg] = ""
        elif name in valued and name not in found and eq:
            found[name] = value
        elif arg in valued and arg not in found and i + 1 < len(args):
            found[arg] = args[i + 1]
            i += 1
        elif not arg.startswith("-") and arg and count < positional:
            found[str(count)] = arg
            count += 1
        else:
            raise Doubt  # an unknown or repeated option, "--", one argument too many: typer's to answer
        i += 1
    for key, value in found.items():
        if key in valued and (not value or value.startswith("-")):
            raise Doubt
    return found


# -- the commands ------------------------------------------------------------------------------------------------


def _failing(compute: Callable[[], Output]) -> Output:
    """Run ``compute``; a DealerError becomes the error line main prints (``ошибка: …``, exit 1)."""
    from dealer.core.errors import DealerError

    try:
        return compute()
    except DealerError as exc:
        from .i18n import error

        return _error_output(error(exc), strict=True)


def _error_output(message: str, strict: bool) -> Output:
    """The error line as typer's commands print it (``[bold red]ошибка:[/] message``, exit 1); ``strict``: a
    doubt where rich might print it otherwise (not strict: after a write, printed as it is, never run again)."""
    from .i18n import catalogue, language

    word = catalogue()["framework"]["error:"] if language() == "ru" else "error:"
    if strict:
        _check_text(f"{word} {message}", None)
    if _terminal(sys.stderr):
        if strict and os.environ.get("NO_COLOR", ""):
            raise Doubt
        return "", f"\x1b[1;31m{word}\x1b[0m {message}\n", 1
    return "", f"{word} {message}\n", 1


def _board(number: int) -> Output:
    from .light import board_line

    def compute() -> Output:
        return _lines(board_line(number)), "", 0

    return _failing(compute)


def _deal_show(args: list[str]) -> Output:
    found = _options(args, ("--ascii",), ("--lang",), 1)
    if "0" not in found:
        raise Doubt
    from .i18n import language
    from .light import deal_show_text

    lang = found.get("--lang", language())
    if lang not in LANGS:
        raise Doubt  # typer's usage error

    def compute() -> Output:
        diagram, number = deal_show_text(found["0"], lang, "--ascii" in found)
        return _lines(diagram) + _lines(number), "", 0

    return _failing(compute)


def _regulation_check(args: list[str]) -> Output:
    from .light import regulation_tables

    path = Path(args[0]) if args else None
    if args and (not args[0] or args[0].startswith("-")):
        raise Doubt

    def compute() -> Output:
        return "".join(_table(spec) for spec in regulation_tables(path)), "", 0

    return _failing(compute)


def _bank_status(args: list[str]) -> Output:
    from .light import DEFAULT_BANK_PATH, bank_status, bank_status_table

    found = _options(args, ("--json",), ("--bank", "--keys"), 0)
    bank = Path(found["--bank"]) if "--bank" in found else DEFAULT_BANK_PATH
    keys = Path(found["--keys"]) if "--keys" in found else None

    def compute() -> Output:
        st = bank_status(bank, keys)
        if "--json" in found:
            from dealer.core.json_types import json_text

            if not sys.stdout.encoding.lower().replace("-", "").startswith("utf"):
                raise Doubt  # machine.print_json writes UTF-8 bytes past the console's encoding
            return json_text(st, sort_keys=False) + "\n", "", 0  # as ``machine.print_json``
        spec = bank_status_table(st)
        return _table(spec) + "".join(line + "\n" for line in spec.lines), "", 0

    return _failing(compute)


def _bank_import(args: list[str]) -> Output:
    """``bank import … --json`` (the people's summary and progress bars are typer's): the same line as
    ``light.bank_import_json`` gives typer's command, in its two halves: reading (a doubt still hands over) and
    writing (never handed over)."""
    valued = ("--bank", "--keys", "--show", "--max-size", "--register")
    found = _options(args, ("--json", "--skip-bad"), valued, sys.maxsize)
    files = [Path(found[str(k)]) for k in range(len(args)) if str(k) in found]
    if "--json" not in found or not files:
        raise Doubt
    _int(found.get("--show", "20"))  # checked as typer checks it (its value is not used with --json)
    from dealer.fsutil import MAX_INPUT_BYTES

    max_mib = _int(found["--max-size"]) if "--max-size" in found else MAX_INPUT_BYTES // 2**20
    if max_mib < 1:
        raise Doubt  # typer's usage error
    from dealer.core.errors import DealerError

    from .i18n import error
    from .light import DEFAULT_BANK_PATH, NothingToImport, collector_paused, import_read, import_write

    bank = Path(found["--bank"]) if "--bank" in found else DEFAULT_BANK_PATH
    keys = Path(found["--keys"]) if "--keys" in found else None

    with collector_paused():
        try:  # reading writes nothing: any doubt, or anything unforeseen, is still typer's
            parsed, skipped = import_read(files, max_mib, "--skip-bad" in found, bank)
        except NothingToImport as exc:
            return _error_output(exc.message(), strict=True)
        except DealerError as exc:
            return _error_output(error(exc), strict=True)
        try:
            register = Path(found["--register"]) if "--register" in found else None
            text = import_write(parsed, skipped, bank, keys, register)
        except DealerError as exc:
            return _error_output(error(exc), strict=False)
        except Exception as exc:
            raise Written(exc) from exc
    return text + "\n", "", 0  # as ``machine.print_line``


# -- printing as rich prints -------------------------------------------------------------------------------------


def _terminal(stream: TextIO) -> bool:
    """Whether rich takes ``stream`` for a terminal (and would style what it writes)."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _width() -> int:
    """The console width rich uses: COLUMNS, else the terminal's (stdin, stdout or stderr), else 80."""
    if os.environ.get("TERM", "").strip().lower() in ("dumb", "unknown"):
        raise Doubt
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    else:
        width = 0
        for fd in (0, 1, 2):
            try:
                width = os.get_terminal_size(fd).columns
            except (AttributeError, ValueError, OSError):
                continue
            break
        width = width or 80
    if width < 1:
        raise Doubt
    return width


def _cells(text: str) -> int:
    """The width of ``text`` on the console, for text whose every character takes one cell (else a doubt)."""
    for char in text:
        if not ("\x20" <= char < "\x7f" or char in ONE_CELL or "\u0400" <= char <= "\u04ff"):
            raise Doubt
    return len(text)


ONE_CELL = frozenset("♠♥♦♣–—…«»\u00a0№·×")
EMOJI_CODE = re.compile(r":\S*:")  # what rich's emoji pattern could take for a code (it needs no blank inside)


def _check_text(text: str, width: int | None) -> None:
    """What rich would print unchanged: no emoji code, and (when ``width``) no line wider than the console."""
    for line in text.split("\n"):
        cells = _cells(line)
        if width is not None and cells > width:
            raise Doubt
        if ":" in line and EMOJI_CODE.search(line):
            raise Doubt  # rich replaces :name: codes by emoji


def _lines(text: str) -> str:
    """``text`` as rich's ``print`` writes it (soft-wrapped at the width, which a doubt keeps from happening)."""
    _check_text(text, _width())
    if any(line != line.rstrip() for line in text.split("\n")):
        raise Doubt
    if not sys.stdout.encoding.lower().replace("-", "").startswith("utf"):
        raise Doubt
    return text + "\n"


def _table(spec: TableSpec) -> str:
    """The table as rich draws it (default box, padding 1, title centred in italics) when it fits the console."""
    width = _width()
    styled = _terminal(sys.stdout)
    if styled and os.environ.get("NO_COLOR", ""):
        raise Doubt
    if not sys.stdout.encoding.lower().replace("-", "").startswith("utf"):
        raise Doubt  # rich draws an ASCII box then
    rows = [*([spec.header] if spec.header else []), *spec.rows]
    columns = max(len(row) for row in rows)
    if any(len(row) != columns for row in rows):
        raise Doubt
    for text in (spec.title, *(cell for row in rows for cell in row)):
        _check_text(text, None)
        if "\n" in text or (text != text.strip(" ") and text.strip(" ") == ""):
            raise Doubt
    sizes = [max(_cells(row[c]) for row in rows) for c in range(columns)]
    total = sum(sizes) + 3 * columns + 1
    if total > width or _cells(spec.title) > total or not spec.title.strip():
        raise Doubt  # rich would shrink the table or wrap the title

    def line(left: str, fill: str, cross: str, right: str) -> str:
        return left + cross.join(fill * (size + 2) for size in sizes) + right + "\n"

    def row(cells: tuple[str, ...], bar: str, bold: bool) -> str:
        parts = []
        for cell, size in zip(cells, sizes, strict=True):
            text = cell.rjust(size) if spec.right else cell.ljust(size)
            parts.append(f"\x1b[1m \x1b[0m\x1b[1m{text}\x1b[0m\x1b[1m \x1b[0m" if bold else f" {text} ")
        return bar + bar.join(parts) + bar + "\n"

    title = spec.title.strip()
    left = (total - len(title)) // 2
    title = " " * left + title + " " * (total - len(title) - left)
    out = (f"\x1b[3m{title}\x1b[0m" if styled else title) + "\n"
    if spec.header:
        out += line("┏", "━", "┳", "┓") + row(spec.header, "┃", styled) + line("┡", "━", "╇", "┩")
    else:
        out += line("┌", "─", "┬", "┐")
    out += "".join(row(cells, "│", False) for cells in spec.rows)
    return out + line("└", "─", "┴", "┘")


# -- the help ----------------------------------------------------------------------------------------------------


def _help(argv: list[str]) -> int | None:
    key = _help_key(argv)
    folder = _cache_dir()
    if key is None or folder is None:
        return None
    path = folder / f"help-{key}.json"
    import json

    try:
        if not (_private(folder) and _private(path)):
            return _record_help(path)
        kept = json.loads(path.read_text(encoding="utf-8"))
        out, err, code = str(kept["stdout"]), str(kept["stderr"]), int(kept["code"])
    except (OSError, ValueError, KeyError, TypeError):
        return _record_help(path)
    sys.stdout.write(out)
    sys.stdout.flush()
    sys.stderr.write(err)
    sys.stderr.flush()
    return code


def _private(path: Path) -> bool:
    """Only this user's own cache is believed: owned by them and writable by nobody else (the key can be
    guessed, so a file another user planted in a shared XDG_CACHE_HOME is not printed)."""
    status = os.stat(path)
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no owner ids in stat; the cache is in the user's own profile, private by its ACL
        return True
    return bool(status.st_uid == getuid() and not status.st_mode & 0o022)


KEEP = 32  # help renderings kept (a new version or an edited help text makes new ones; the oldest go)


def _cache_dir() -> Path | None:
    """``DEALER_CACHE_DIR``, else ``bridge-dealer`` in ``XDG_CACHE_HOME``, else in ``~/.cache``."""
    own = os.environ.get("DEALER_CACHE_DIR")
    if own:
        return Path(own) if os.path.isabs(own) else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None
    return Path(base) / "bridge-dealer"


def _help_key(argv: list[str]) -> str | None:
    """A hash of everything typer's help output depends on (see the module's docstring)."""
    import hashlib

    from dealer import __version__

    from .i18n import cli_language

    try:
        width = _width()
    except Doubt:
        return None
    parts: list[object] = [__version__, sys.version, sys.prefix, argv, cli_language(argv), width]
    for stream in (sys.stdin, sys.stdout, sys.stderr):
        parts.append(_isatty(stream))
        parts.append(getattr(stream, "encoding", None))
    parts.append([(name, os.environ.get(name)) for name in RENDER_ENV])
    here = os.path.dirname(os.path.abspath(__file__))
    folders = [here, os.path.join(here, "i18n"), os.path.dirname(here)]
    import importlib.util

    for library in ("typer", "rich"):
        spec = importlib.util.find_spec(library)
        if spec is None or not spec.submodule_search_locations:
            return None
        folders.extend(spec.submodule_search_locations)
    for folder in folders:
        try:
            with os.scandir(folder) as entries:
                for entry in sorted(entries, key=lambda e: e.name):
                    if entry.is_file():
                        stat = entry.stat()
                        parts.append((entry.path, stat.st_size, stat.st_mtime_ns))
        except OSError:
            return None
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def _isatty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class _Tee:
    """A text stream that writes through to ``stream`` and keeps a copy (for the help cache)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.kept: list[str] = []

    def write(self, text: str) -> int:
        written = self.stream.write(text)  # bytes (click probes with b"") fail here, as on the real stream
        self.kept.append(text)
        return written

    def __getattr__(self, name: str) -> object:  # isatty, fileno, encoding, flush, … of the real stream
        return getattr(self.stream, name)


def _record_help(path: Path) -> int:
    """Let typer render the help, printing it as usual, and keep what it printed in the cache."""
    import json

    from .root import run_full

    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    real = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = out, err
    try:
        run_full()
        code: int = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            raise
    finally:
        sys.stdout, sys.stderr = real
    kept = {"stdout": "".join(out.kept), "stderr": "".join(err.kept), "code": code}
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as file:
            json.dump(kept, file, ensure_ascii=False)
        os.replace(partial, path)
        older = sorted(path.parent.glob("help-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)[KEEP:]
        for stale in older:
            stale.unlink(missing_ok=True)
    except OSError:
        pass  # no cache: typer renders the help every time
    return code
