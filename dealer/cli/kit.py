"""The command line's one parser: commands declared as typed functions, options and arguments as their defaults.

A command module declares a group (``Group``) and its commands as functions whose parameters name their options
and arguments (``x: int = Option(1, "--x", help=…)``, ``files: list[Path] = Argument(...)``); the parameter's
annotation gives the value's type (``str``, ``int``, ``float``, ``bool``, ``Path``, each perhaps ``| None``, and
``list[…]`` for a repeated option or a variadic argument). Nothing is read from the function until its command
runs or shows its help, and only the standard library is imported: the command line starts at once.

Usage errors (exit 2) and help are worded through the catalogue (``dealer/cli/i18n/ru.json``, ``framework``,
``help``, ``arguments``, ``types``); the help is laid out by ``dealer.cli.helptext`` when asked for.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .i18n import language, printable, word

F = TypeVar("F", bound=Callable[..., object])
# Any: the marker stands as the default of a parameter of any declared type (as typer's ``...`` did)
REQUIRED: Any = ...  # ``Option(...)``/``Argument(...)``: no default, the value must be given
HELP_NAMES = ("-h", "--help")


class Exit(Exception):
    """End the command with ``code`` (0: success), nothing more printed."""

    def __init__(self, code: int = 0) -> None:
        super().__init__(code)
        self.code = code


class UsageError(Exception):
    """A command line that cannot be run as typed: usage line, hint and message on stderr, exit 2."""

    def __init__(self, message: str, path: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.path = list(path)


class BadParameter(UsageError):
    """A value a command refuses (raised by the command, or by the parser for a value of the wrong type)."""

    def __init__(self, message: str, param_hint: str | None = None) -> None:
        if param_hint is None:
            super().__init__(word("Invalid value: {message}", message=message))
        else:
            super().__init__(word("Invalid value for {param_hint}: {message}", param_hint=param_hint, message=message))


class Param:
    """An option or an argument, as declared (its name, type and command are filled in when the command is read)."""

    __slots__ = ("callback", "decls", "default", "envvar", "help_source", "is_eager", "is_option", "many", "max",
                 "metavar_text", "min", "name", "off", "type")  # fmt: skip

    def __init__(
        self,
        is_option: bool,
        default: object,
        decls: tuple[str, ...],
        help: str | Callable[[], str] | None = None,
        envvar: str | None = None,
        min: float | None = None,
        max: float | None = None,
        # Any: a callback takes the option's value, whatever type the command declared
        callback: Callable[[Any], object] | None = None,
        is_eager: bool = False,
        metavar: str | None = None,
    ) -> None:
        self.is_option = is_option
        self.default = default
        self.decls = decls
        self.help_source = help  # a callable: a text that needs a module to write (read when help is shown)
        self.envvar = envvar
        self.min = min
        self.max = max
        self.callback = callback
        self.is_eager = is_eager
        self.metavar_text = metavar
        self.name = ""
        self.off: tuple[str, ...] = ()  # a flag's names that turn it off (``--sealed/--show``: ``--show``)
        self.type = "str"
        self.many = False

    @property
    def help(self) -> str | None:
        return self.help_source() if callable(self.help_source) else self.help_source

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    @property
    def flag(self) -> bool:
        return self.is_option and self.type == "bool"

    def bound(self, name: str, annotation: str) -> Param:
        """A copy for parameter ``name`` of a command (an option object may be shared by several commands)."""
        copy = Param(self.is_option, self.default, self.decls, self.help_source, self.envvar, self.min, self.max,
                     self.callback, self.is_eager, self.metavar_text)  # fmt: skip
        copy.name = name
        text = annotation.replace(" ", "").replace("|None", "").replace("Optional[", "").rstrip("]")
        copy.many = text.startswith(("list[", "List["))
        base = text.removeprefix("list[").removeprefix("List[").rstrip("]")
        copy.type = {"int": "int", "float": "float", "bool": "bool", "Path": "path"}.get(base, "str")
        if copy.is_option and not copy.decls:
            copy.decls = ("--" + name.replace("_", "-"),)
        if copy.flag:
            copy.decls = tuple(d.split("/")[0] for d in copy.decls)
            copy.off = tuple(d.split("/", 1)[1] for d in self.decls if "/" in d)
        return copy

    def metavar(self) -> str:
        """How the argument is shown in the usage line and the help (Russian: the catalogue's name)."""
        if language() == "ru":
            from .i18n import catalogue

            shown = catalogue()["arguments"].get(self.name)
            if isinstance(shown, str):
                return shown
        if self.metavar_text:
            return self.metavar_text
        text = self.name.upper() + ("..." if self.many else "")
        return text if self.required else f"[{text}]"

    def hint(self) -> str:
        """How an error names the parameter: ``'--bank'`` or ``'FILE'``."""
        return "'" + (max(self.decls, key=len) if self.is_option else self.metavar()) + "'"


# Any: settings are Param's keyword fields; the result stands as a default of any declared parameter type
def Option(default: object = None, *decls: str, **settings: Any) -> Any:
    """An option of a command, as its parameter's default (``Any``: the parameter is annotated with its type)."""
    return Param(True, default, decls, **settings)


# Any: as Option's
def Argument(default: object = None, **settings: Any) -> Any:
    """A positional argument of a command, as its parameter's default (see ``Option``)."""
    return Param(False, default, (), **settings)


def echo(text: object = "", err: bool = False, nl: bool = True) -> None:
    """Text for people, a line unless ``nl`` is False (control characters shown, not obeyed)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(printable(str(text)) + ("\n" if nl else ""))
    stream.flush()


def cleandoc(doc: str | None) -> str | None:
    """A docstring's text as ``inspect.cleandoc`` gives it (without importing inspect)."""
    if not doc:
        return None
    lines = doc.expandtabs().split("\n")
    indent = min((len(line) - len(line.lstrip()) for line in lines[1:] if line.strip()), default=0)
    lines = [lines[0].lstrip(), *(line[indent:] for line in lines[1:])]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


class Command:
    """A command: its function, and the options and arguments read from the function's signature on first use."""

    def __init__(self, name: str, function: Callable[..., object], help: str | None = None) -> None:
        self.name = name
        self.function = function
        self.explicit_help = help
        self._params: list[Param] | None = None

    @property
    def help(self) -> str | None:
        return self.explicit_help or cleandoc(self.function.__doc__)

    @property
    def params(self) -> list[Param]:
        if self._params is None:
            self._params = params_of(self.function)
        return self._params


def params_of(function: Callable[..., object]) -> list[Param]:
    """The options and arguments of a function, in the order of its parameters."""
    code = function.__code__
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    defaults = dict(zip(names[code.co_argcount - len(function.__defaults__ or ()) : code.co_argcount],
                        function.__defaults__ or (), strict=True))  # fmt: skip
    defaults.update(function.__kwdefaults__ or {})
    annotations = function.__annotations__
    out = []
    for name in names:
        declared = defaults.get(name)
        if not isinstance(declared, Param):
            raise TypeError(f"{function.__qualname__}: parameter {name} is not an Option or Argument")
        out.append(declared.bound(name, str(annotations.get(name, "str"))))
    return out


class Group:
    """A group of commands (and of groups): ``dealer``, ``dealer bank``, …"""

    def __init__(self, name: str | None = None, help: str | None = None, no_args_is_help: bool = True) -> None:
        self.name = name or ""
        self.explicit_help = help
        self.no_args_is_help = no_args_is_help
        self.commands: dict[str, Command | Group] = {}
        self.callback_function: Callable[..., object] | None = None
        self._params: list[Param] | None = None

    @property
    def help(self) -> str | None:
        if self.explicit_help:
            return self.explicit_help
        return cleandoc(self.callback_function.__doc__) if self.callback_function else None

    @property
    def params(self) -> list[Param]:
        if self._params is None:
            self._params = params_of(self.callback_function) if self.callback_function else []
        return self._params

    def command(self, name: str | None = None, help: str | None = None) -> Callable[[F], F]:
        def register(function: F) -> F:
            command_name = name or function.__name__.replace("_", "-")
            self.commands[command_name] = Command(command_name, function, help)
            return function

        return register

    def add_group(self, group: Group, name: str, no_args_is_help: bool | None = None) -> None:
        group.name = name
        if no_args_is_help is not None:
            group.no_args_is_help = no_args_is_help
        self.commands[name] = group

    def callback(self) -> Callable[[F], F]:
        def register(function: F) -> F:
            self.callback_function = function
            return function

        return register


# -- parsing ----------------------------------------------------------------------------------------------------


def run(root: Group, argv: Sequence[str]) -> int:
    """Parse ``argv`` against ``root`` (named as the program) and run the command it names; the exit code (0, 1 or
    2)."""
    path = [root.name]
    try:
        return _run_group(root, list(argv), path)
    except UsageError as exc:
        _usage_error(root, exc.path or path, exc.message)
        return 2
    except Exit as exc:
        return exc.code


def resolve(root: Group, path: Sequence[str]) -> Command | Group:
    """The command at ``path`` (names below the root)."""
    node: Command | Group = root
    for name in path:
        assert isinstance(node, Group)
        node = node.commands[name]
    return node


def _run_group(group: Group, args: list[str], path: list[str]) -> int:
    i = 0
    values: dict[str, object] = {}
    seen: set[str] = set()
    options = _option_map(group.params, path)
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        if args[i] in HELP_NAMES:
            return _help(group, path)
        i = _take_option(options, args, i, values, seen, path)
    for param in group.params:
        if param.is_eager and param.callback is not None and param.name in values:
            param.callback(values[param.name])
    if group.callback_function is not None:
        group.callback_function(**_finish(group.params, values, seen, path))
    if i >= len(args):
        if group.no_args_is_help:
            _help(group, path)
            return 2  # as click: no command is a usage error, answered with the help
        raise UsageError(word("Missing command."), path)
    name = args[i]
    sub = group.commands.get(name)
    if sub is None:
        message = word("No such command '{name}'.", name=name)
        close = _close(name, list(group.commands))
        if close:
            message += " " + word("Did you mean {possibility}?", possibility=repr(close))
        raise UsageError(message, path)
    path.append(name)
    if isinstance(sub, Group):
        return _run_group(sub, args[i + 1 :], path)
    return _run_command(sub, args[i + 1 :], path)


def _run_command(command: Command, args: list[str], path: list[str]) -> int:
    params = command.params
    options = _option_map(params, path)
    values: dict[str, object] = {}
    seen: set[str] = set()
    positional: list[str] = []
    i = 0
    only_positional = False
    if any(a in HELP_NAMES for a in args[: args.index("--") if "--" in args else len(args)]):
        return _help(command, path)
    while i < len(args):
        arg = args[i]
        if only_positional or not arg.startswith("-") or arg == "-" or _negative_number(arg, options):
            positional.append(arg)
            i += 1
        elif arg == "--":
            only_positional = True
            i += 1
        else:
            i = _take_option(options, args, i, values, seen, path)
    arguments = [p for p in params if not p.is_option]
    for k, param in enumerate(arguments):
        if param.many:
            after = len(arguments) - k - 1
            taken = positional[: len(positional) - after] if after else positional[:]
            positional = positional[len(taken) :]
            if taken:
                values[param.name] = [_convert(param, text, path) for text in taken]
                seen.add(param.name)
        elif positional:
            values[param.name] = _convert(param, positional.pop(0), path)
            seen.add(param.name)
    if positional:
        key = (
            "Got unexpected extra argument ({args})"
            if len(positional) == 1
            else "Got unexpected extra arguments ({args})"
        )
        raise UsageError(word(key, args=" ".join(positional)), path)
    kwargs = _finish(params, values, seen, path)
    command.function(**kwargs)
    return 0


def _negative_number(arg: str, options: dict[str, Param]) -> bool:
    return arg not in options and arg[1:2].isdigit()


def _option_map(params: list[Param], path: list[str]) -> dict[str, Param]:
    return {decl: p for p in params if p.is_option for decl in (*p.decls, *p.off)}


def _take_option(
    options: dict[str, Param], args: list[str], i: int, values: dict[str, object], seen: set[str], path: list[str]
) -> int:
    arg = args[i]
    name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
    if not arg.startswith("--") and len(arg) > 2 and arg not in options:
        attached = options.get(arg[:2])  # a short option with its value attached, as click and getopt take it: -n2
        if attached is not None and not attached.flag:
            name, eq, value = arg[:2], "=", arg[2:]
    param = options.get(name)
    if param is None:
        message = word("No such option: {name}", name=name)
        close = _close(name, [*options, "--help"])
        if close:
            message += " " + word("Did you mean {possibility}?", possibility=close)
        raise UsageError(message, path)
    if param.flag:
        if eq:
            raise UsageError(word("Option '{name}' does not take a value.", name=name), path)
        values[param.name] = name not in param.off
        seen.add(param.name)
        return i + 1
    if not eq:
        if i + 1 >= len(args):
            raise UsageError(word("Option '{name}' requires an argument.", name=name), path)
        value = args[i + 1]
        i += 1
    converted = _convert(param, value, path)
    if param.many:
        previous = values.get(param.name)
        values[param.name] = [*(previous if isinstance(previous, list) else []), converted]
    else:
        values[param.name] = converted
    seen.add(param.name)
    return i + 1


def _finish(params: list[Param], values: dict[str, object], seen: set[str], path: list[str]) -> dict[str, object]:
    """Every parameter's value: given, else from its environment variable, else its default (required: an error)."""
    out: dict[str, object] = {}
    for param in params:
        if param.name in seen:
            out[param.name] = values[param.name]
            continue
        from_env = os.environ.get(param.envvar) if param.envvar else None
        if from_env:
            out[param.name] = _convert(param, from_env, path)
            if param.many:
                out[param.name] = [out[param.name]]
        elif param.required:
            key = "Missing option '{param_hint}'." if param.is_option else "Missing argument '{param_hint}'."
            raise UsageError(word(key, param_hint=param.hint()[1:-1]), path)
        elif param.many:
            out[param.name] = list(param.default) if isinstance(param.default, list | tuple) else []
        else:
            out[param.name] = param.default
    return out


def _convert(param: Param, text: str, path: list[str]) -> object:
    """The typed value of ``text`` for ``param`` (a usage error when it is not one)."""
    value: object
    if param.type == "int" or param.type == "float":
        try:
            value = int(text) if param.type == "int" else float(text)
        except ValueError:
            key = "{value!r} is not a valid integer." if param.type == "int" else "{value!r} is not a valid number."
            raise _bad(param, word(key, value=text), path) from None
        number = float(value)
        if (param.min is not None and number < param.min) or (param.max is not None and number > param.max):
            raise _bad(param, word("{value} is not in the range {range}.", value=text, range=_range(param)), path)
        return value
    if param.type == "path":
        return Path(text)
    if param.type == "bool":
        lowered = text.lower()
        if lowered in ("1", "true", "yes", "y", "on"):
            return True
        if lowered in ("0", "false", "no", "n", "off", ""):
            return False
        raise _bad(param, word("{value!r} is not a valid boolean.", value=text), path)
    return text


def _range(param: Param) -> str:
    def shown(value: float) -> str:
        return str(int(value)) if param.type == "int" else str(value)

    if param.min is not None and param.max is not None:
        return f"{shown(param.min)}<=x<={shown(param.max)}"
    return f"x>={shown(param.min)}" if param.min is not None else f"x<={shown(param.max or 0)}"


def _bad(param: Param, message: str, path: list[str]) -> UsageError:
    return UsageError(word("Invalid value for {param_hint}: {message}", param_hint=param.hint(), message=message), path)


def _close(name: str, choices: list[str]) -> str | None:
    from difflib import get_close_matches

    found = get_close_matches(name, choices, n=1)
    return found[0] if found else None


# -- help and errors ----------------------------------------------------------------------------------------------


def _help(node: Command | Group, path: list[str]) -> int:
    from .helptext import render_help

    sys.stdout.write(render_help(node, path))
    sys.stdout.flush()
    return 0


def _usage_error(root: Group, path: list[str], message: str) -> None:
    from .helptext import usage_line

    node = resolve(root, path[1:])
    help_hint = word("Try '{command_path} {help_option}' for help.", command_path=" ".join(path), help_option="-h")
    text = f"{usage_line(node, path)}\n{help_hint}\n\n{word('Error')}: {printable(message)}\n"
    sys.stderr.write(text)
    sys.stderr.flush()
