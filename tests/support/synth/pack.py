"""A minimal git packfile writer for the synthetic-history generator.

At 100x the LOG is ~70 MB and ~80 versions of it live in history. Writing each version as a loose object
would compress gigabytes; instead the newest version is stored once and every older version is a tiny
delta of copy instructions against it ("older = a prefix of newer", "older = newer minus a span"). This is
how `git gc` would store such a file anyway. Trees and commits are built by pygit2 and land here too.
"""
from __future__ import annotations

import hashlib
import os
import struct
import tempfile
import zlib
from pathlib import Path

BLOB, REF_DELTA = 3, 7
_MAX_COPY = 0xFFFF00        # a copy instruction holds at most 24 bits of length


def blob_oid(*parts: bytes | memoryview) -> bytes:
    """The git object id (raw 20 bytes) of a blob made of `parts` concatenated, without concatenating."""
    size = sum(len(p) for p in parts)
    digest = hashlib.sha1(b"blob %d\x00" % size)
    for part in parts:
        digest.update(part)
    return digest.digest()


def _deflate(data: bytes) -> bytes:
    """zlib at speed 1; small objects get a small window, because setting up the default one costs ~0.3 ms."""
    if len(data) >= 4096:
        return zlib.compress(data, 1)
    packer = zlib.compressobj(1, zlib.DEFLATED, 12, 1)
    return packer.compress(data) + packer.flush()


def _entry_header(kind: int, size: int) -> bytes:
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def copy_delta(base_size: int, spans: list[tuple[int, int]]) -> bytes:
    """A delta whose target is the concatenation of `(offset, length)` spans of the base."""
    target = sum(length for _, length in spans)
    out = bytearray(_varint(base_size) + _varint(target))
    for offset, length in spans:
        while length > 0:
            size = min(length, _MAX_COPY)
            op, args = 0x80, bytearray()
            for i in range(4):
                if (offset >> (8 * i)) & 0xFF:
                    op |= 1 << i
                    args.append((offset >> (8 * i)) & 0xFF)
            for i in range(3):
                if (size >> (8 * i)) & 0xFF:
                    op |= 0x10 << i
                    args.append((size >> (8 * i)) & 0xFF)
            out.append(op)
            out += args
            offset += size
            length -= size
    return bytes(out)


class PackWriter:
    """Collect blobs (whole or as copy-deltas of a blob already added), then write `pack-*.pack` and `.idx`."""

    def __init__(self, pack_dir: Path) -> None:
        self.pack_dir = pack_dir
        pack_dir.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix="tmp_synth_", suffix=".body", dir=pack_dir)
        self._body_path = Path(name)
        self._body = os.fdopen(fd, "wb")
        self._offset = 12                      # after the pack header
        self._entries: dict[bytes, tuple[int, int]] = {}   # oid -> (offset, crc32)

    def __contains__(self, oid: bytes) -> bool:
        return oid in self._entries

    def _write(self, oid: bytes, raw: bytes) -> None:
        self._entries[oid] = (self._offset, zlib.crc32(raw))
        self._body.write(raw)
        self._offset += len(raw)

    def add_object(self, oid: bytes, kind: int, data: bytes) -> None:
        """An object whose id the caller computed (libgit2 hands it over with the data)."""
        if oid not in self._entries:
            self._write(oid, _entry_header(kind, len(data)) + _deflate(data))

    def add_blob(self, data: bytes) -> bytes:
        oid = blob_oid(data)
        if oid not in self._entries:
            self._write(oid, _entry_header(BLOB, len(data)) + _deflate(data))
        return oid

    def add_copy_delta(self, base_oid: bytes, base: bytes, spans: list[tuple[int, int]]) -> bytes:
        """A blob equal to the given spans of `base` (already added), stored as a delta against it."""
        view = memoryview(base)
        oid = blob_oid(*(view[o:o + n] for o, n in spans))
        if oid not in self._entries:
            delta = copy_delta(len(base), spans)
            self._write(oid, _entry_header(REF_DELTA, len(delta)) + base_oid + _deflate(delta))
        return oid

    def finish(self) -> None:
        """Write the pack (header, body, checksum) and its version-2 index; libgit2 finds them on lookup."""
        self._body.close()
        digest = hashlib.sha1()
        header = b"PACK" + struct.pack(">II", 2, len(self._entries))
        tmp_pack = self._body_path.with_suffix(".pack")
        with open(tmp_pack, "wb") as out, open(self._body_path, "rb") as body:
            out.write(header)
            digest.update(header)
            while chunk := body.read(1 << 20):
                out.write(chunk)
                digest.update(chunk)
            pack_sum = digest.digest()
            out.write(pack_sum)
        self._body_path.unlink()
        if self._offset >= 1 << 31:
            raise ValueError("synthetic pack over 2 GiB; use a smaller scale")
        oids = sorted(self._entries)
        fanout = [0] * 256
        for oid in oids:
            fanout[oid[0]] += 1
        total = 0
        for i in range(256):
            total += fanout[i]
            fanout[i] = total
        idx = bytearray(b"\xfftOc" + struct.pack(">I", 2) + struct.pack(">256I", *fanout))
        idx += b"".join(oids)
        idx += b"".join(struct.pack(">I", self._entries[o][1]) for o in oids)
        idx += b"".join(struct.pack(">I", self._entries[o][0]) for o in oids)
        idx += pack_sum
        idx += hashlib.sha1(idx).digest()
        name = f"pack-{pack_sum.hex()}"
        # The pack first: an index without its pack would make lookups fail.
        os.replace(tmp_pack, self.pack_dir / f"{name}.pack")
        (self.pack_dir / f"{name}.idx").write_bytes(bytes(idx))
