"""Reading a bundle's ``arrays.npz`` with bounded memory: nothing inflates before its size is known.

``np.load`` on a stranger's ``.npz`` inflates a member completely before anyone can look at its
shape: a 2 MB file whose one member inflates to 2 GiB of zeros costs 2 GiB. Here the manifest's
declared sizes are summed and checked against a budget first, each member's ``.npy`` header is
read (without pickles) and compared with the manifest, and then exactly the declared number of
bytes is inflated straight into the array, in chunks; one byte more is a refusal. Peak memory is
the declared, budget-checked size plus one chunk.

Arrays too large for the memory available are memory-mapped instead of read: :func:`write_npz`
stores members uncompressed with their data 64-byte aligned (an extra field in the zip's local
header pads it, as Android's zipalign does), and a stored member of at least ``MMAP_MIN_BYTES``
whose header checks out can be returned as a read-only ``np.memmap`` of the file (no copy; a
10^5-class bank's 700 MB of weights need not fit in memory). A model whose arrays fit in
``READ_SHARE`` of the available memory is read whole instead. A map of the model's own file would die
with SIGBUS when the file is overwritten in place while open (``cp new.npz arrays.npz``, ``rsync
--inplace``, sync tools that rewrite files in place), so a mapped member is first copied into a private,
already-deleted temporary file (next to the model, else in the temporary folder; holes stay holes) and
that copy is mapped: no one else can truncate it. Only a file that cannot change (a read-only file
system, an immutable file) is mapped where it is, and one for which no disk has room for the copy
(then overwriting it in place while it is open is the one way left to end the program).
The file is still a plain ``.npz`` that ``np.load`` reads.
"""
from __future__ import annotations

import errno
import os
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from ..errors import ModelFormatError
from ..guards.files import NotRegularFile, open_regular
from ..guards.limits import MEMORY_SHARE, available_memory, fmt_bytes
from ..guards.read_limits import MAX_MEMBERS  # most members an arrays file may have (an export's too)
from .bounded_zip import (ZipLimitError, check_npy_header, check_npz_sizes, entry_count, member_bytes,
                          npy_header, parse_specs, read_npy_member)

_CHUNK = 1 << 20
#: stored (uncompressed) members at least this large may be memory-mapped on load (when they do not fit in memory)
MMAP_MIN_BYTES = 16 << 20
#: a model whose arrays fit in this share of the available memory is read whole, never mapped
READ_SHARE = 0.5
#: alignment of every member's data in files written by :func:`write_npz`
ALIGN = 64
_ZIPALIGN_ID = 0xD935  # the extra-field id Android's zipalign pads with


def write_npz(fh, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` to the open binary file ``fh`` (at offset 0), each
    member's array data starting at a multiple of ``ALIGN`` bytes in the file, so that
    :func:`read_npz` can memory-map it. ``np.load`` reads the result like any ``.npz``."""
    import io

    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, arr in arrays.items():
            arr = np.ascontiguousarray(arr)
            hbuf = io.BytesIO()
            npy_format.write_array_header_1_0(hbuf, npy_format.header_data_from_array_1_0(arr))
            header = hbuf.getvalue()
            name = f"{key}.npy"
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = len(header) + arr.nbytes
            zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule when opening for write
            fixed = 30 + len(info.filename.encode("utf-8")) + (20 if zip64 else 0) + 4
            pad = (-(zf.fp.tell() + fixed)) % ALIGN
            info.extra = struct.pack("<HH", _ZIPALIGN_ID, pad) + b"\0" * pad
            with zf.open(info, "w") as out:
                out.write(header)
                flat = arr.reshape(-1).view(np.uint8) if arr.size else np.zeros(0, np.uint8)
                for a in range(0, flat.size, _CHUNK * 16):
                    out.write(flat[a:a + _CHUNK * 16])


def default_budget() -> int:
    """Bytes all arrays of one bundle may declare: most of the memory available now."""
    return int(MEMORY_SHARE * available_memory())


def parse_manifest(npz_path: Path, manifest: dict) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """``{key: (dtype, shape)}`` from the JSON manifest; ModelFormatError for any bad entry."""
    try:
        return parse_specs(manifest, MAX_MEMBERS)
    except ZipLimitError as exc:
        raise ModelFormatError(f"{npz_path}: {exc}") from None


def read_npz(npz_path: Path, manifest: dict, *, budget: int | None = None) -> dict[str, np.ndarray]:
    """The arrays of ``npz_path`` as ``manifest`` declares them (``{key: {"dtype", "shape"}}``).

    Raises ModelFormatError for a file that is not a zip, holds other members than declared,
    declares more than ``budget`` bytes in total (default: 80% of available memory), or whose
    member's header, dtype, shape or length differs from the manifest. The file must be a
    regular file reached without a link.
    """
    specs = parse_manifest(npz_path, manifest)
    budget = default_budget() if budget is None else int(budget)
    try:
        fd = open_regular(npz_path, follow_links=False)
    except FileNotFoundError:
        raise ModelFormatError(f"{npz_path} is missing") from None
    except NotRegularFile as exc:
        raise ModelFormatError(str(exc)) from None
    except OSError as exc:
        raise ModelFormatError(f"cannot read {npz_path}: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        try:
            count = entry_count(fh)
            if count is not None and count > max(MAX_MEMBERS, len(specs)):
                raise ModelFormatError(f"{npz_path} has {count} members, the model declares {len(specs)}; refused")
            zf = zipfile.ZipFile(fh)
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, OSError, NotImplementedError,
                struct.error) as exc:
            if isinstance(exc, ModelFormatError):
                raise
            raise ModelFormatError(f"{npz_path} is corrupt: not a valid .npz archive (truncated, or not a zip); "
                                   f"the model is damaged") from None
        with zf:
            return _read_members(npz_path, zf, specs, fh, budget)


def _read_members(npz_path: Path, zf: zipfile.ZipFile, specs: dict, fh, budget: int) -> dict[str, np.ndarray]:
    infos = zf.infolist()
    by_key: dict[str, zipfile.ZipInfo] = {}
    for info in infos:
        if not info.filename.endswith(".npy") or info.filename[:-4] in by_key:
            raise ModelFormatError(f"{npz_path}: unexpected member {info.filename[:80]!r}; refused")
        if info.flag_bits & 0x1 or info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ModelFormatError(f"{npz_path}: member {info.filename[:80]!r} is encrypted or uses an unknown "
                                   f"compression; refused")
        by_key[info.filename[:-4]] = info
    missing = sorted(set(specs) - set(by_key))
    extra = sorted(set(by_key) - set(specs))
    if missing:
        raise ModelFormatError(f"{npz_path} is incomplete: missing {', '.join(missing[:5])}")
    if extra:
        raise ModelFormatError(f"{npz_path} holds members the model does not declare: {', '.join(extra[:5])}")
    size = os.fstat(fh.fileno()).st_size
    try:  # every member against the manifest before one is inflated
        check_npz_sizes(by_key, specs, size)
    except ZipLimitError as exc:
        raise ModelFormatError(f"{npz_path}: {exc}") from None
    # mapped: stored members too large to read into the memory available now (see the module docstring)
    mapped = _to_map(specs, by_key, size, _mostly_holes(fh))
    declared = sum(member_bytes(dt, shape) for key, (dt, shape) in specs.items() if key not in mapped)
    if declared > budget:
        raise ModelFormatError(f"{npz_path}: the model declares {fmt_bytes(declared)} of arrays, more than the "
                               f"{fmt_bytes(budget)} of memory this computer can give it; refused before reading")
    out = {}
    for key, (dtype, shape) in specs.items():
        arr = _map_member(npz_path, zf, fh, by_key[key], key, dtype, shape) if key in mapped else None
        out[key] = arr if arr is not None else _read_member(npz_path, zf, by_key[key], key, dtype, shape)
    return out


def _mostly_holes(fh) -> bool:
    """Whether the file occupies less than half its size on disk: sparse (a 4 GB "model" made of holes
    costs nothing to write) or compressed by the file system. Its large members are then mapped, not
    read, so the classes' shape checks run before their pages cost memory."""
    st = os.fstat(fh.fileno())
    return hasattr(st, "st_blocks") and st.st_size > MMAP_MIN_BYTES and st.st_blocks * 512 < st.st_size // 2


def _to_map(specs: dict, by_key: dict, size: int, sparse: bool = False) -> set[str]:
    """Keys of the stored members to memory-map: none when all arrays fit in :data:`READ_SHARE` of the
    memory available (read, they survive the file being overwritten in place; a map would die of
    SIGBUS), else the large stored ones, largest first, until the rest fits; every large stored one
    when the file is ``sparse``."""
    sizes = {key: member_bytes(dt, shape) for key, (dt, shape) in specs.items()}
    room = 0 if sparse else READ_SHARE * available_memory()
    total = sum(sizes.values())
    mapped: set[str] = set()
    for key in sorted(sizes, key=sizes.get, reverse=True):
        if total <= room:
            break
        if by_key[key].compress_type == zipfile.ZIP_STORED and MMAP_MIN_BYTES <= sizes[key] <= size:
            mapped.add(key)
            total -= sizes[key]
    return mapped


def _map_member(npz_path: Path, zf: zipfile.ZipFile, fh, info: zipfile.ZipInfo, key: str, dtype: np.dtype,
                shape: tuple[int, ...]) -> np.ndarray | None:
    """A stored member as a read-only memory map of the file, after the same header checks as a read;
    None when its data is not aligned for ``dtype`` (then it is read instead)."""
    nbytes = member_bytes(dtype, shape)
    try:
        with zf.open(info) as src:
            h_shape, fortran, h_dtype = npy_header(src)
            header_len = src.tell()
        check_npy_header(key, h_shape, h_dtype, dtype, shape)
        if info.file_size != header_len + nbytes or info.compress_size != info.file_size:
            raise ModelFormatError(f"{npz_path}: member {key!r} holds {info.file_size - header_len} bytes, its "
                                   f"declared {dtype}{list(shape)} needs {nbytes}; refused")
        fh.seek(info.header_offset)
        local = fh.read(30)
        if len(local) != 30 or local[:4] != b"PK\x03\x04":
            raise ModelFormatError(f"{npz_path}: member {key!r} has a corrupt local header")
        name_len, extra_len = struct.unpack("<HH", local[26:30])
        offset = info.header_offset + 30 + name_len + extra_len + header_len
        if offset % max(dtype.alignment, 1):
            return None
        if os.fstat(fh.fileno()).st_size < offset + nbytes:
            raise ModelFormatError(f"{npz_path}: array {key!r} is truncated")
    except ModelFormatError:
        raise
    except ZipLimitError as exc:
        raise ModelFormatError(f"{npz_path}: {exc}") from None
    except (ValueError, zipfile.BadZipFile, EOFError, OSError, struct.error, NotImplementedError, RuntimeError) as exc:
        raise ModelFormatError(f"{npz_path}: member {key!r} is corrupt ({str(exc)[:160]})") from None
    if nbytes == 0:
        return np.empty(shape, dtype)
    order = "F" if fortran else "C"
    if _cannot_change(fh.fileno()):
        return np.memmap(fh, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
    copy = _private_copy(fh.fileno(), offset, nbytes, npz_path.parent)
    if copy is None:  # no disk has room for a copy: map the file itself (module docstring)
        return np.memmap(fh, dtype=dtype, mode="r", offset=offset, shape=shape, order=order)
    with copy:  # the map keeps its own handle on the deleted copy
        return np.memmap(copy, dtype=dtype, mode="r", offset=0, shape=shape, order=order)


_FS_IOC_GETFLAGS = 0x80086601  # Linux: a file's attribute flags
_FS_IMMUTABLE_FL = 0x10


def _cannot_change(fd: int) -> bool:
    """Whether the open file cannot be rewritten in place: on a read-only file system, or immutable."""
    try:
        if os.fstatvfs(fd).f_flag & getattr(os, "ST_RDONLY", 1):
            return True
    except OSError:
        pass
    try:
        import array
        import fcntl

        flags = array.array("l", [0])
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, flags, True)
        return bool(flags[0] & _FS_IMMUTABLE_FL)
    except (ImportError, OSError, OverflowError):
        return False


def _private_copy(fd: int, offset: int, nbytes: int, near: Path):
    """An open, already-deleted temporary file holding bytes ``offset .. offset + nbytes`` of ``fd``
    (data segments copied by the kernel, holes left holes), or None when no place has room for it."""
    import tempfile

    for place in (near, Path(tempfile.gettempdir())):
        try:
            st = os.statvfs(place)
            if st.f_bavail * st.f_frsize < nbytes + (64 << 20):
                continue
            out = tempfile.TemporaryFile(dir=str(place))
        except OSError:
            continue
        try:
            out.truncate(nbytes)
            _copy_data(fd, out.fileno(), offset, nbytes)
            return out
        except OSError:  # the disk filled up meanwhile, or this file system refuses: the next place
            out.close()
    return None


def _copy_data(src: int, dst: int, offset: int, nbytes: int) -> None:
    """Copy ``src[offset:offset + nbytes]`` to ``dst[0:nbytes]``, skipping the source's holes."""
    end, pos = offset + nbytes, offset
    while pos < end:
        try:
            data = os.lseek(src, pos, os.SEEK_DATA)
            hole = os.lseek(src, data, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # nothing but a hole from pos to the end of the file
                return
            data, hole = pos, end  # the file system cannot say where its holes are: copy it all
        except AttributeError:  # pragma: no cover - no SEEK_DATA on this platform
            data, hole = pos, end
        data, hole = min(data, end), min(hole, end)
        while data < hole:
            n = _copy_range(src, dst, data, data - offset, hole - data)
            if n <= 0:
                raise OSError("the model file ended while it was copied")
            data += n
        pos = max(hole, pos + 1)


def _copy_range(src: int, dst: int, at: int, to: int, count: int) -> int:
    if hasattr(os, "copy_file_range"):
        try:
            return os.copy_file_range(src, dst, count, at, to)
        except OSError:
            pass
    chunk = os.pread(src, min(count, 1 << 24), at)
    return os.pwrite(dst, chunk, to) if chunk else 0


def _read_member(npz_path: Path, zf: zipfile.ZipFile, info: zipfile.ZipInfo, key: str, dtype: np.dtype,
                 shape: tuple[int, ...]) -> np.ndarray:
    try:
        return read_npy_member(zf, info, key, dtype, shape)
    except ZipLimitError as exc:
        raise ModelFormatError(f"{npz_path}: {exc}") from None
    except (ValueError, zipfile.BadZipFile, EOFError, zlib.error, OSError, RuntimeError, SyntaxError,
            NotImplementedError) as exc:
        raise ModelFormatError(f"{npz_path}: member {key!r} is corrupt ({str(exc)[:160]})") from None
