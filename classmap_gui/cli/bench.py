"""``classmap bench NAME``: run a benchmark of ``classmap_gui.bench`` and print JSON.

Each module there has ``OPTIONS`` (name -> (default, help)) and
``run(*, progress, should_stop, **options) -> dict``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from ..bench.common import with_app_hand_model
from ..core.errors import ClassMapError
from ..user_dirs import built_hand_model, cache_dir
from .common import ProgressBar, Subcommands, emit, json_default, parse_sets, parse_value

BENCHES = ("features", "classmap", "compressive", "scale", "bursts", "scan", "roofline", "hand-network",
           "hand-readers", "responsiveness", "demo-reading", "journey-features", "add-gesture")
BENCHES += ("report",)  # not a measurement: writes docs/results.md and the README's table from the JSONs


def cmd_bench(args: argparse.Namespace) -> int:
    """``classmap bench NAME``: run one benchmark module with its options and ``--set`` pairs; prints its
    JSON result (and writes it to ``--out``)."""
    extra = parse_sets(args.set)
    try:
        mod = importlib.import_module(f"classmap_gui.bench.{args.bench.replace('-', '_')}")
    except ModuleNotFoundError as exc:
        raise ClassMapError(f"benchmark {args.bench!r} is not available in this build ({exc})") from exc
    given = vars(args)  # an option not given is absent (SUPPRESS), one given as "none" is None
    options = {k: v for k, v in given.items() if k in mod.OPTIONS and (v is not None or k == "model_dir")}
    options.update(extra)
    if "cache_dir" in mod.OPTIONS and "cache_dir" not in options:  # core reads no environment: the CLI does
        options["cache_dir"] = bench_cache_dir(args.bench)
    options, hand_model = with_app_hand_model(options, mod.OPTIONS, built_hand_model())
    unknown = set(options) - set(mod.OPTIONS)
    if unknown:
        raise ClassMapError(f"bench {args.bench}: unknown option(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(mod.OPTIONS)}")
    quiet = None
    if args.quiet_machine is not None:
        from ..core.timing import wait_for_quiet

        quiet = wait_for_quiet(max_wait_s=args.quiet_machine)
    rev = revision()  # the code that runs: taken before, not after, the run
    if hand_model is not None:
        print(f"bench {args.bench}: {hand_model['says']}", file=sys.stderr, flush=True)
    bar = ProgressBar(enabled=True)  # a long run is never silent, on a terminal or in a log
    try:
        result = mod.run(progress=bar, **options)
    finally:
        bar.close()
    if quiet is not None:  # quiet only if it stayed so while the rounds ran (the bench's load_during)
        from ..bench.common import quiet_machine
        result["quiet_machine"] = quiet_machine(quiet, result.get("load_during"))
    result.setdefault("revision", rev)
    if hand_model is not None:
        result["hand_model_used"] = {k: v for k, v in hand_model.items() if k != "says"}
    emit(result, True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2, default=json_default)
    return 0


def revision() -> str:
    """The package version and, in a git checkout, its commit (the ledger's revision of a run)."""
    import subprocess

    from .. import __version__

    try:
        head = subprocess.run(["git", "-C", os.path.dirname(__file__), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", os.path.dirname(__file__), "status", "--porcelain", "--untracked-files=no",
                                "--", ".."], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        head, dirty = "", ""
    return f"{__version__}" + (f" ({head}{' + uncommitted changes' if dirty else ''})" if head else "")


def bench_cache_dir(bench: str) -> str:
    """The cache folder of ``bench``: ``$CLASSMAP_CACHE``, else the user cache folder (platformdirs)."""
    env = os.environ.get("CLASSMAP_CACHE")
    if env:
        return env
    return os.path.join(cache_dir(), f"bench-{bench}")


def add_commands(sub: Subcommands, load_options: bool = True) -> None:
    """Register ``classmap bench <name>`` for every benchmark this build has (with each one's
    options when ``load_options``: that imports the benchmark modules)."""
    s = sub.add_parser("bench", help="run a benchmark and print JSON")
    bsub = s.add_subparsers(dest="bench", required=True, metavar="BENCH")
    for name in BENCHES:
        b = bsub.add_parser(name, help=f"the {name} benchmark")
        try:
            opts = importlib.import_module(f"classmap_gui.bench.{name.replace('-', '_')}").OPTIONS if load_options else {}
        except ImportError:
            opts = {}
        for opt, (default, helptext) in opts.items():
            b.add_argument(f"--{opt.replace('_', '-')}", dest=opt, type=parse_value, default=argparse.SUPPRESS,
                           help=f"{helptext} (default: {default})".replace("%", "%%"))   # argparse formats %
        b.add_argument("--json", action="store_true", help="print JSON (always on for benchmarks)")
        b.add_argument("--set", action="append", metavar="KEY=VALUE", help="further options")
        b.add_argument("--out", help="also write the JSON to this file")
        b.add_argument("--quiet-machine", nargs="?", const=600.0, type=float, metavar="SECONDS",
                       help="first wait up to SECONDS (600) for the 1-minute load average to fall below 1.0; "
                            "the JSON's quiet_machine records whether it did")
        b.set_defaults(func=cmd_bench)
