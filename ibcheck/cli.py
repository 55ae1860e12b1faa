"""The one command-line entry point, ``ibcheck``, for all three layers.

The subcommands live in :mod:`ibcheck.commands`, each a thin layer over :mod:`ibcheck.api`,
imported lazily so that ``ibcheck claims`` never loads torch. Bad input is one line on
stderr and exit status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import sys
import threading
import warnings

from ibcheck.commands import kkt as kkt_cli
from ibcheck.commands import radius as radius_cli
from ibcheck.commands import theory as theory_cli
from ibcheck.commands import train as simulate_cli
from ibcheck.errors import InputError, RunFailure, StoreInUse, echo
from ibcheck.theory.outdir import check_out
from ibcheck.theory.registry import claim_files, load_claims, load_entry_points
from ibcheck.theory.result import visible_text


class _Visible:
    """A text stream that shows every control and bidi character of what it is given as its escape (``\\u202e``):
    text from a claim or a file reaches the terminal as data, and cannot ring, clear a line or reorder what is shown
    (the progress bars write to stderr, which keeps its own control sequences)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(visible_text(text))

    def __getattr__(self, name):
        return getattr(self._stream, name)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of a usage block, a flag's bad value said as
    ``--steps x is not an integer``, and ``-inf``, ``-1e5`` read as values (numbers), not as unknown options."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf(inity)?|nan)$", re.I)

    def _get_value(self, action, arg_string):  # type: ignore[override]
        """The type's own refusal (an ArgumentTypeError names the text and what it is not) said of the flag."""
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError as err:
            cause = err.__context__
            if isinstance(cause, argparse.ArgumentTypeError) and action.option_strings:
                problem = str(cause)
                text = problem if problem.startswith((repr(arg_string), arg_string)) else f"{arg_string} {problem}"
                self.error(f"{'/'.join(action.option_strings)} {text}", prefixed=False)
            raise

    def error(self, message: str, prefixed: bool = True):  # type: ignore[override]  # noqa: D401
        self.exit(2, f"ibcheck: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    from ibcheck.commands import compare as compare_cli  # heavy: torch (loaded on first use)

    parser = _Parser(prog="ibcheck", description="A symbolic-numeric checker for implicit-bias theory: bounds, KKT points, simulation.")
    parser.add_argument("--claims", dest="claims_files", action="append", default=[], metavar="FILE",
                        help="a Python file of your own claims and experiments (repeatable; also IBCHECK_CLAIMS=path1:path2)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    theory_cli.register(sub)
    simulate_cli.register(sub)
    radius_cli.register(sub)
    kkt_cli.register(sub)
    compare_cli.register(sub)
    return parser


def as_flags(err, args: argparse.Namespace, argv: list[str] | None = None, flags: list[str] | None = None) -> str:
    """An API refusal of one parameter (:class:`~ibcheck.errors.InputError` with ``parameter`` and ``problem``)
    as the command line says it: ``--steps -1 is out of range: must ...``, when the parameter is one of this
    command's flags. ``flags`` are its option strings (aliases such as ``--width``/``--m``); the one the user
    typed in ``argv`` is named, with the value as typed. Any other error is its message."""
    name = getattr(err, "parameter", None)
    key = None
    if name and "[" in name:  # one entry of a mapping parameter, grid['d']: the flag --grid, the token d=...
        name, key = name.split("[", 1)[0], name.split("[", 1)[1].rstrip("]").strip("'\"")
    if not name or not getattr(err, "problem", None) or not hasattr(args, name):
        return str(err)
    argv = argv or []
    names = flags or ["--" + name.replace("_", "-")]
    flag, value = names[0], str(err.value)
    for i, tok in enumerate(argv):
        opt, eq, rest = tok.partition("=")
        if opt in names:
            flag, value = opt, (rest if eq else argv[i + 1] if i + 1 < len(argv) else value)
            if key is not None:  # the token of that entry among the flag's values
                value = next((t for t in argv[i + 1:] if t.startswith(key + "=")), value)
    sep = "" if err.problem[:1] in ":;," else " "
    if isinstance(err.value, bool):  # a switch (--trajectory): the flag alone
        return f"{flag}{sep}{err.problem}"
    return f"{flag} {echo(value)}{sep}{err.problem}"


def _option_strings(parser: argparse.ArgumentParser, command: str, dest: str | None) -> list[str] | None:
    """The option strings of ``dest`` in subcommand ``command`` (None if it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:
            for a in action.choices[command]._actions:
                if a.dest == dest and a.option_strings:
                    return list(a.option_strings)
    return None


def load_user_claims(files: list[str]) -> None:
    """The claims of installed packages (entry points), of IBCHECK_CLAIMS and of --claims, registered.
    The files are also put in IBCHECK_CLAIMS, so that sweep workers started from here load them too."""
    load_entry_points()
    paths = claim_files() + list(files)
    for p in dict.fromkeys(paths):
        load_claims(p)
    if paths:
        os.environ["IBCHECK_CLAIMS"] = os.pathsep.join(dict.fromkeys(os.path.abspath(p) for p in paths))


# commands whose --out names one file (the others name a directory)
FILE_OUTPUTS = ("graph", "new-claim")
# commands that keep finished work in a sweep database under --out, so that a rerun resumes
RESUMABLE = ("compare", "report")


def _resume_hint(args: argparse.Namespace) -> str:
    """What an interrupted command leaves, in one sentence: outputs are written whole or not at all."""
    if args.command in RESUMABLE:
        return (f"Finished sweep rows are kept in {args.out} (sweep.sqlite); run the same command again to resume. "
                "Reports are written only at the end.")
    if getattr(args, "out", None):
        return f"Nothing was written to {args.out}: outputs are written whole, at the end."
    return "Nothing was written."


def _remove_created(out: str | None) -> None:
    """Remove the directory this command created at ``out`` (``args.created_out``: its own ``os.mkdir`` succeeded, so
    no other process's files are there): refused input writes nothing."""
    if out is None or not os.path.lexists(out):
        return
    if os.path.isdir(out) and not os.path.islink(out):
        shutil.rmtree(out, ignore_errors=True)
    else:
        os.remove(out)


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A library's warning (matplotlib's, at 10^4 cells) as one line, without the source path and line it names inside
    the installation (IBCHECK_DEBUG=1 keeps Python's own form)."""
    text = " ".join(str(message).split())
    print(visible_text(f"ibcheck: warning: {text[:300]}"), file=sys.stderr if file is None else file)


class _Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, a cluster's scheduler, ``kill``): handled as Ctrl-C is, so that a directory this command
    made is removed instead of left half-written (exit 143, 128 + 15)."""


def _terminate(signum, frame):
    raise _Terminated()


def main(argv: list[str] | None = None) -> int:
    """The command, with SIGTERM handled as Ctrl-C and warnings shown in one line while it runs; the caller's signal
    handler and warning settings are restored after it (``main`` is called in-process by tests and notebooks too)."""
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if on_main else None
    if on_main and getattr(signal.getsignal(signal.SIGINT), "__name__", "") == "_interrupted_at_start":
        signal.signal(signal.SIGINT, signal.default_int_handler)  # the start-up handler (ibcheck/__init__) hands over
    try:
        with warnings.catch_warnings():
            return _command(argv)
    finally:
        if on_main:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _command(argv: list[str] | None) -> int:
    try:
        parser = build_parser()  # loads torch: a Ctrl-C meanwhile is the same one line as later
        args = parser.parse_args(argv)
    except KeyboardInterrupt as err:
        print(f"ibcheck: {'terminated' if isinstance(err, _Terminated) else 'interrupted'}. Nothing was written.", file=sys.stderr)
        return 143 if isinstance(err, _Terminated) else 130
    if not os.environ.get("IBCHECK_DEBUG"):
        # numpy's overflow/invalid warnings from a diverging start are noise on a terminal: every
        # result carries its own status (not a certificate, not proven, ...)
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.showwarning = _one_line_warning
    out = getattr(args, "out", None)
    stdout, sys.stdout = sys.stdout, _Visible(sys.stdout)  # type: ignore[assignment]
    try:
        load_user_claims(args.claims_files)
        if out is not None:  # before any computing: one line, exit 2, nothing written

            check_out(out, "file" if args.command in FILE_OUTPUTS else "dir")
        return int(args.func(args) or 0)
    except KeyboardInterrupt as err:
        if getattr(args, "created_out", False) and args.command not in RESUMABLE:
            _remove_created(getattr(args, "created_top", out))  # outputs are written whole or not at all
        how = "terminated" if isinstance(err, _Terminated) else "interrupted"
        print(f"ibcheck: {how}. {_resume_hint(args)}", file=sys.stderr)
        return 143 if isinstance(err, _Terminated) else 130
    except InputError as err:
        if getattr(args, "created_out", False) and not isinstance(err, StoreInUse):
            _remove_created(getattr(args, "created_top", out))  # bad input leaves nothing behind (a store in use is another process's)
        flags = _option_strings(parser, args.command, (err.parameter or "").split("[", 1)[0] or None)
        print(visible_text(f"ibcheck: error: {as_flags(err, args, list(argv if argv is not None else sys.argv[1:]), flags)}"), file=sys.stderr)
        return 2
    except RunFailure as err:
        print(f"ibcheck: run failed: {err}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as err:  # the file system refused a write (full disk, permissions changed meanwhile, ...)
        where = f" {err.filename}" if getattr(err, "filename", None) else ""
        print(f"ibcheck: error: cannot write{where}: {err.strerror or err}", file=sys.stderr)
        return 2
    except Exception as err:  # a bug, not bad input: one line unless asked for the traceback
        if os.environ.get("IBCHECK_DEBUG"):
            raise
        print(f"ibcheck: internal error: {type(err).__name__}: {err} (set IBCHECK_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    finally:
        sys.stdout = stdout
        if getattr(args, "out_lock", None) is not None:
            os.close(args.out_lock)  # the lock on --out (commands.args.claim_out) ends with the command


if __name__ == "__main__":
    sys.exit(main())
