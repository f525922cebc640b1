"""Global memory of the emulated device in 4 KiB pages, allocated and filled on first touch.

A launch may name buffers of gigabytes while an emulation touches a few kilobytes of them (the traffic
model emulates a sample of CTAs of a real launch). :class:`PagedMemory` holds 4 KiB pages, each made when
an access first reaches it and filled by the device's ``fill`` callback (a buffer's initial values for that
range, variables' initialisers), so the cost follows what the emulation touches, not the launch's size.
It takes the indexing the emulator uses: a slice, or an integer array of byte offsets.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

PAGE_BITS = 12
PAGE = 1 << PAGE_BITS
_MASK = PAGE - 1


class PagedMemory:
    """``size`` bytes, zero unless ``fill(start, page)`` writes a page's initial bytes (``start``: its offset)."""

    def __init__(self, size: int, fill: Callable[[int, np.ndarray], None]) -> None:
        self.size = size
        self.fill = fill
        self.pages: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return self.size

    def page(self, p: int) -> np.ndarray:
        found = self.pages.get(p)
        if found is None:
            found = np.zeros(PAGE, dtype=np.uint8)
            self.fill(p << PAGE_BITS, found)
            self.pages[p] = found
        return found

    def _range(self, key: slice) -> tuple[int, int]:
        start, stop, step = key.indices(self.size)
        if step != 1:
            raise ValueError("paged memory takes contiguous slices only")
        return start, max(start, stop)

    def __getitem__(self, key: slice | np.ndarray) -> np.ndarray:
        if isinstance(key, slice):
            start, stop = self._range(key)
            out = np.empty(stop - start, dtype=np.uint8)
            at = start
            while at < stop:
                p, o = at >> PAGE_BITS, at & _MASK
                n = min(PAGE - o, stop - at)
                out[at - start: at - start + n] = self.page(p)[o: o + n]
                at += n
            return out
        idx = np.asarray(key, dtype=np.int64)
        flat = idx.reshape(-1)
        pages = flat >> PAGE_BITS
        if len(flat) and pages.min() == pages.max():
            return self.page(int(pages[0]))[flat & _MASK].reshape(idx.shape)
        touched, which = np.unique(pages, return_inverse=True)  # one gather from the touched pages stacked
        stacked = np.stack([self.page(int(p)) for p in touched])
        return stacked[which.reshape(-1), flat & _MASK].reshape(idx.shape)

    def __setitem__(self, key: slice | np.ndarray, values: np.ndarray) -> None:
        if isinstance(key, slice):
            start, stop = self._range(key)
            data = np.broadcast_to(np.asarray(values, dtype=np.uint8).reshape(-1), (stop - start,))
            at = start
            while at < stop:
                p, o = at >> PAGE_BITS, at & _MASK
                n = min(PAGE - o, stop - at)
                self.page(p)[o: o + n] = data[at - start: at - start + n]
                at += n
            return
        idx = np.asarray(key, dtype=np.int64)
        flat = idx.reshape(-1)
        data = np.broadcast_to(np.asarray(values, dtype=np.uint8), idx.shape).reshape(-1)
        pages = flat >> PAGE_BITS
        if len(flat) and pages.min() == pages.max():
            self.page(int(pages[0]))[flat & _MASK] = data
            return
        for p in np.unique(pages):
            sel = pages == p
            self.page(int(p))[flat[sel] & _MASK] = data[sel]
