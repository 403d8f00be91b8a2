"""Line noise: damaged frames (flipped bits, dropped and inserted bytes), junk frames, repeated frames."""

from __future__ import annotations

import random

from .faults import NoiseConfig


class LineNoise:
    def __init__(self, config: NoiseConfig, rng: random.Random) -> None:
        self.config = config
        self.rng = rng
        self.damaged = 0
        self.junk = 0
        self.repeated = 0

    @property
    def injected(self) -> int:
        """Noise frames put on the line: damaged real frames plus junk frames."""
        return self.damaged + self.junk

    def apply(self, data: bytes) -> bytes:
        if not self.config.active or not data:
            return data
        out = bytearray()
        frames = data.split(b"\x00")
        tail = frames.pop()  # bytes after the last delimiter (normally empty)
        for frame in frames:
            real = frame + b"\x00"
            if self.rng.random() < self.config.duplicate_rate:
                self.repeated += 1
                out += real
            out += self._damage(frame) + b"\x00" if self.rng.random() < self.config.corrupt_rate else real
            out += self._junk(frame)
        return bytes(out + tail)

    def _damage(self, frame: bytes) -> bytes:
        self.damaged += 1
        buf = bytearray(frame)
        what = self.rng.randrange(3)
        if not buf or what == 2:
            buf.insert(self.rng.randrange(len(buf) + 1), self.rng.randrange(256))
        elif what == 0:
            i = self.rng.randrange(len(buf))
            buf[i] ^= 1 << self.rng.randrange(8)
        else:
            del buf[self.rng.randrange(len(buf))]
        return bytes(buf)

    def _junk(self, frame: bytes) -> bytes:
        mean = self.config.garbage_per_frame
        if mean <= 0:
            return b""
        count = int(mean) + (1 if self.rng.random() < mean - int(mean) else 0)
        out = bytearray()
        for _ in range(count):
            self.junk += 1
            r = self.rng.random()
            kind = 0 if r < 0.45 else 1 if r < 0.9 else 2
            if kind == 0 or not frame:  # random bytes
                junk = self._bytes(1 + int(self.rng.random() * 39))
            elif kind == 1 and frame:  # a mangled copy of the real frame, several hits
                buf = bytearray(frame)
                for _ in range(1 + (self.rng.random() < 0.5)):
                    i = int(self.rng.random() * len(buf))
                    buf[i] = (buf[i] ^ (1 << int(self.rng.random() * 8))) or 0x55
                junk = bytes(buf)
            else:  # a run of bytes longer than any frame (no delimiter)
                junk = self._bytes(250 + int(self.rng.random() * 50))
            out += junk + b"\x00"
        return bytes(out)

    def _bytes(self, n: int) -> bytes:
        return self.rng.randbytes(n).replace(b"\x00", b"\x01")
