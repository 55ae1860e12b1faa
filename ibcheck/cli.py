"""The one command-line entry point, ``ibcheck``, for all three layers.

The subcommands live in :mod:`ibcheck.commands`, each a thin layer over :mod:`ibcheck.api`,
imported lazily so that ``ibcheck claims`` never loads torch. Bad input is one line on
stderr and exit status 2, without a traceback.
"""
from __future__ import annotations

import argparse
import os
import re
import sys


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (exit 2) instead of a usage block, and ``-inf``, ``-1e5`` read as
    values (numbers), not as unknown options."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|inf(inity)?|nan)$", re.I)

    def error(self, message: str):  # noqa: D401
        # "argument --d: 0 is out of range: ..." (a range check in theory.argtypes) reads "--d 0 is out of range: ..."
        m = re.match(r"^argument (--[\w-]+(?:/--[\w-]+)*): (\S*) (is out of range: .*)$", message)
        if m:
            message = f"{m.group(1)} {m.group(2)} {m.group(3)}"
        self.exit(2, f"ibcheck: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    from ibcheck.commands import compare as compare_cli
    from ibcheck.commands import kkt as kkt_cli
    from ibcheck.commands import radius as radius_cli
    from ibcheck.commands import theory as theory_cli
    from ibcheck.commands import train as simulate_cli

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


def as_flags(message: str, args: argparse.Namespace, argv: list[str] | None = None, flags: list[str] | None = None) -> str:
    """An API message ``steps=-1 is out of range: steps must ...`` as the command line says it:
    ``--steps -1 is out of range: must ...``, for a parameter that is one of this command's flags.
    ``flags`` are the option strings of that parameter (aliases such as ``--width``/``--m``); the one
    the user typed in ``argv`` is named, with the value as typed."""
    m = re.match(r"^([a-z][a-z0-9_]*)=(\S+) (is |must )", message)
    if not m or not hasattr(args, m.group(1)):
        return message
    name, value, argv = m.group(1), m.group(2).strip(chr(39) + chr(34)), argv or []
    names = flags or ["--" + name.replace("_", "-")]
    flag = names[0]
    for i, tok in enumerate(argv):
        opt, eq, rest = tok.partition("=")
        if opt in names:
            flag, value = opt, (rest if eq else argv[i + 1] if i + 1 < len(argv) else value)
    rest = message[m.end(2) + 1:].replace(f"out of range: {name} must", "out of range: must", 1)
    return f"{flag} {value} {rest}"


def _option_strings(parser: argparse.ArgumentParser, command: str, dest: str) -> list[str] | None:
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
    from ibcheck.theory.registry import claim_files, load_claims, load_entry_points

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


def main(argv: list[str] | None = None) -> int:
    from ibcheck.errors import InputError, RunFailure

    parser = build_parser()
    args = parser.parse_args(argv)
    if not os.environ.get("IBCHECK_DEBUG"):
        import warnings

        # numpy's overflow/invalid warnings from a diverging start are noise on a terminal: every
        # result carries its own status (not a certificate, not proven, ...)
        warnings.simplefilter("ignore", RuntimeWarning)
    try:
        load_user_claims(args.claims_files)
        if getattr(args, "out", None) is not None:  # before any computing: one line, exit 2, nothing written
            from ibcheck.theory.outdir import check_out

            check_out(args.out, "file" if args.command in FILE_OUTPUTS else "dir")
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(f"ibcheck: interrupted. {_resume_hint(args)}", file=sys.stderr)
        return 130
    except InputError as err:
        msg = str(err)
        m = re.match(r"^([a-z][a-z0-9_]*)=", msg)
        flags = _option_strings(parser, args.command, m.group(1)) if m else None
        print(f"ibcheck: error: {as_flags(msg, args, list(argv if argv is not None else sys.argv[1:]), flags)}", file=sys.stderr)
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


if __name__ == "__main__":
    sys.exit(main())
