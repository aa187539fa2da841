"""A project's manifest, ``project.json``: its format name and version, and reading and checking it
before anything it names is opened (sizes, names, image entries, settings), so a corrupt, foreign or
newer-version project is one :class:`ModelFormatError` naming the file and the fault.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..errors import ModelFormatError
from ..guards.files import NotRegularFile
from .containers import FolderSource
from .runs import RUNS_DIR

FORMAT = "classmap-studio-project"
VERSION = 2
MANIFEST = "project.json"
ARCHIVE_SUFFIX = ".cmproj"
TOP_LEVEL = (MANIFEST, "images", "captures", "model", RUNS_DIR)
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
#: lists and objects a project.json may hold: one list per image entry, a few more per run and setting
MAX_MANIFEST_CONTAINERS = 1_000_000
MAX_SIDE = 4096
IMAGE_PATH = re.compile(r"images/[0-9]{4,6}-[A-Za-z0-9_. -]{1,64}/[0-9]{6,9}\.png")
_PNG_SIG = b"\x89PNG\r\n\x1a\n"
_DIGEST = re.compile(r"[0-9a-f]{32}")


def fail(where: str, what: str) -> ModelFormatError:
    """The error for a project that cannot be read: ``"<where>: <what>"``."""
    return ModelFormatError(f"{where}: {what}")


def read_manifest(source, where: str) -> dict:
    """The checked ``project.json`` of a project folder (a Path) or source (:class:`_FolderSource`, ...)."""
    if isinstance(source, Path):
        source = FolderSource(source)
    try:
        raw = source.read(MANIFEST, max_bytes=MAX_MANIFEST_BYTES)  # a huge one is refused before reading
    except NotRegularFile as exc:
        raise fail(where, f"{MANIFEST} cannot be read: {exc}") from None
    except (OSError, KeyError):
        raise fail(where, f"not a ClassMap Studio project ({MANIFEST} is missing)") from None
    # each [] or {} costs ~60 bytes parsed: bounded, so a manifest of empty lists cannot take gigabytes
    if len(raw) > MAX_MANIFEST_BYTES or raw.count(b"[") + raw.count(b"{") > MAX_MANIFEST_CONTAINERS:
        raise fail(where, f"{MANIFEST} is too large to be a project description")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise fail(where, f"{MANIFEST} is corrupt ({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise fail(where, "not a ClassMap Studio project (foreign format)")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise fail(where, f"invalid project format version {version!r}")
    if version > VERSION:
        raise fail(where, f"written by a newer ClassMap Studio (project format {version}, this one reads up to "
                           f"{VERSION}); upgrade ClassMap Studio to open it")
    return doc


def check_doc(doc: dict, where: str) -> tuple[list[str], int, int, bool, list, dict]:
    """``(class names, height, width, colour, image entries, settings)`` of a manifest, each checked."""
    names = doc.get("class_names")
    if not isinstance(names, list) or not all(isinstance(c, str) and 0 < len(c) <= 256 for c in names):
        raise fail(where, "class_names must be a list of non-empty names")
    if len(set(names)) != len(names):
        raise fail(where, "class_names has duplicates")
    size = doc.get("image_size")
    if (not isinstance(size, list) or len(size) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= MAX_SIDE for v in size)):
        raise fail(where, f"image_size must be [height, width] between 1 and {MAX_SIDE}")
    colour = doc.get("colour")
    if not isinstance(colour, bool):
        raise fail(where, "colour must be true or false")
    entries = doc.get("images")
    if not isinstance(entries, list):
        raise fail(where, "the image list is missing")
    for e in entries:
        if (not isinstance(e, list) or len(e) != 3 or not isinstance(e[0], str) or not IMAGE_PATH.fullmatch(e[0])
                or not isinstance(e[1], int) or isinstance(e[1], bool) or not 0 <= e[1] < len(names)
                or not isinstance(e[2], str) or not _DIGEST.fullmatch(e[2])):
            raise fail(where, f"bad image entry {str(e)[:120]!r} (want [\"images/<class>/<n>.png\", label, "
                               f"checksum])")
    if len({e[0] for e in entries}) != len(entries):
        raise fail(where, "the image list names a file twice")
    settings = doc.get("settings", {})
    if not isinstance(settings, dict):
        raise fail(where, "settings must be a JSON object")
    return names, size[0], size[1], colour, entries, settings


def png_size(data: bytes) -> tuple[int, int] | None:
    """(h, w) from a PNG header without decoding it, so a hostile header cannot allocate gigabytes."""
    if len(data) < 24 or not data.startswith(_PNG_SIG) or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[20:24], "big"), int.from_bytes(data[16:20], "big")
