"""A one-line progress report for long reads and index builds (no tqdm needed)."""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

__all__ = ["Progress"]

# When the stream is not a terminal (a log file, CI), each report is a new line: keep them rare.
_LOG_INTERVAL = 5.0


class Progress:
    """Report documents read, docs/s, MB/s and the share of the input done, on one line.

    On a terminal the line is rewritten in place (carriage return) at most every `min_interval`
    seconds; on any other stream a full line is written at most every 5 seconds. ``close()``
    writes a final summary line. Rates are averages since the start.

    Parameters
    ----------
    total_bytes : int or None
        Input size, for the percentage; None when unknown.
    quiet : bool
        Write nothing at all.
    stream : text stream or None
        Where to write; None means ``sys.stderr`` at construction time.
    min_interval : float
        Seconds between two reports on a terminal.
    clock : callable
        Returns the time in seconds (for tests); ``time.monotonic`` by default.

    Notes
    -----
    Not thread-safe: call ``update`` from one thread. Usable as a context manager, which calls
    ``close``.

    Examples
    --------
    >>> import io
    >>> ticks = iter([0.0, 10.0, 12.0, 20.0])
    >>> out = io.StringIO()
    >>> with Progress(4_000_000, stream=out, clock=lambda: next(ticks)) as progress:
    ...     progress.update(150_000, 1_000_000)
    ...     progress.update(150_000, 1_000_000)
    >>> print(out.getvalue(), end="")
    150,000 docs  15,000 docs/s  0.1 MB/s  [25%]
    300,000 docs in 20.0 s  15,000 docs/s  0.1 MB/s  2.0 MB
    """

    def __init__(
        self,
        total_bytes: Optional[int] = None,
        *,
        quiet: bool = False,
        stream: Optional[TextIO] = None,
        min_interval: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
    ):
        if total_bytes is not None:
            if isinstance(total_bytes, bool) or not isinstance(total_bytes, int):
                raise TypeError(
                    f"total_bytes must be an int or None, got {type(total_bytes).__name__}"
                )
            if total_bytes < 0:
                raise ValueError(f"total_bytes must be >= 0, got {total_bytes}")
        if not isinstance(quiet, bool):
            raise TypeError(f"quiet must be a bool, got {type(quiet).__name__}")
        if isinstance(min_interval, bool) or not isinstance(min_interval, (int, float)):
            raise TypeError(f"min_interval must be a number, got {type(min_interval).__name__}")
        if not min_interval >= 0:
            raise ValueError(f"min_interval must be >= 0, got {min_interval}")
        self.total_bytes = total_bytes
        self.docs = 0
        self.nbytes = 0
        self._quiet = quiet
        self._stream = sys.stderr if stream is None else stream
        self._clock = clock
        isatty = getattr(self._stream, "isatty", None)
        self._tty = bool(isatty and isatty())
        self._interval = min_interval if self._tty else max(min_interval, _LOG_INTERVAL)
        self._start = clock()
        self._last = self._start
        self._width = 0  # length of the line on screen, to blank out a longer previous one
        self._closed = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def update(self, docs: int, nbytes: int) -> None:
        """Add `docs` documents and `nbytes` input bytes; report if the interval has passed."""
        self.docs += docs
        self.nbytes += nbytes
        if self._quiet:
            return
        now = self._clock()
        if now - self._last >= self._interval:
            self._last = now
            self._write(self._line(now))

    def close(self) -> None:
        """Write the summary line (once)."""
        if self._closed:
            return
        self._closed = True
        if not self._quiet:
            now = self._clock()
            elapsed = now - self._start
            self._write(
                f"{self.docs:,} docs in {elapsed:.1f} s  {self._rates(elapsed)}  "
                f"{self.nbytes / 1e6:,.1f} MB",
                final=True,
            )

    def _rates(self, elapsed: float) -> str:
        docs_s, mb_s = (self.docs / elapsed, self.nbytes / 1e6 / elapsed) if elapsed > 0 else (0, 0)
        return f"{docs_s:,.0f} docs/s  {mb_s:,.1f} MB/s"

    def _line(self, now: float) -> str:
        line = f"{self.docs:,} docs  {self._rates(now - self._start)}"
        if self.total_bytes is not None:
            done = self.nbytes / self.total_bytes if self.total_bytes else 1.0
            line += f"  [{min(100, int(100 * done))}%]"
        return line

    def _write(self, line: str, final: bool = False) -> None:
        if self._tty:
            # Pad over the tail of a longer previous line; the summary ends the line.
            text = "\r" + line.ljust(self._width) + ("\n" if final else "")
            self._width = 0 if final else len(line)
        else:
            text = line + "\n"
        self._stream.write(text)
        self._stream.flush()
