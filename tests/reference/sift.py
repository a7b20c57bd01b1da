"""Plain numpy/scipy oracles for the SIFT scale space and DoG extrema (mirkit.image._sift)."""

import numpy as np
from scipy import ndimage


def upsample2x(image):
    """Centre-aligned bilinear doubling, edge pixels repeated (OpenCV's INTER_LINEAR by 2)."""
    out = np.asarray(image, np.float64)
    for axis in (0, 1):
        a = np.moveaxis(out, axis, 0)
        prev = np.concatenate([a[:1], a[:-1]])
        nxt = np.concatenate([a[1:], a[-1:]])
        both = np.empty((2 * a.shape[0],) + a.shape[1:])
        both[0::2] = 0.75 * a + 0.25 * prev
        both[1::2] = 0.75 * a + 0.25 * nxt
        out = np.moveaxis(both, 0, axis)
    return out


def gaussian_pyramid(image, n_octaves, n_scales=3, sigma=1.6, upsample=True):
    """Lists of (n_scales + 3, H, W) float64 stacks by repeated scipy Gaussian blurs."""
    base = upsample2x(image) if upsample else np.asarray(image, np.float64)
    assumed = 0.5 * (2 if upsample else 1)
    base = ndimage.gaussian_filter(base, np.sqrt(max(sigma**2 - assumed**2, 0.01)),
                                   mode="mirror", truncate=4.0)
    k = 2.0 ** (1.0 / n_scales)
    octaves = []
    for _ in range(n_octaves):
        levels = [base]
        for i in range(1, n_scales + 3):
            prev = sigma * k ** (i - 1)
            inc = np.sqrt((prev * k) ** 2 - prev**2)
            levels.append(ndimage.gaussian_filter(levels[-1], inc, mode="mirror", truncate=4.0))
        octaves.append(np.stack(levels))
        src = levels[n_scales]
        h, w = src.shape[0] // 2 * 2, src.shape[1] // 2 * 2
        base = src[:h, :w].reshape(h // 2, 2, w // 2, 2).mean(axis=(1, 3))  # 2 x 2 means
    return octaves


def dog(octaves):
    return [np.diff(g, axis=0) for g in octaves]


def brute_force_extrema(dogs, threshold, border=5):
    """Sorted (octave index, layer, row, col) of pixels of layers 1..s, at least `border` from
    the edges, with |D| > threshold and D >= all 26 neighbours (D > 0) or <= all (D < 0)."""
    found = []
    for k, d in enumerate(dogs):
        d = np.asarray(d)
        s2, rows, cols = d.shape
        for layer in range(1, s2 - 1):
            r0, r1, c0, c1 = border, rows - border, border, cols - border
            if r1 <= r0 or c1 <= c0:
                continue
            v = d[layer, r0:r1, c0:c1]
            neigh = [d[layer + dz, r0 + dy:r1 + dy, c0 + dx:c1 + dx]
                     for dz in (-1, 0, 1) for dy in (-1, 0, 1) for dx in (-1, 0, 1)
                     if (dz, dy, dx) != (0, 0, 0)]
            mx, mn = np.max(neigh, axis=0), np.min(neigh, axis=0)
            hit = ((v > threshold) & (v >= mx)) | ((v < -threshold) & (v <= mn))
            for r, c in zip(*np.nonzero(hit)):
                found.append((k, layer, r + r0, c + c0))
    return sorted(found)


def orientation_histogram(level, x, y, scale, n_bins=36):
    """The smoothed orientation histogram of a keypoint at (x, y) with blur `scale` (octave
    pixels) on Gaussian image `level`: central-difference gradients of the pixels within
    round(4.5 scale) of the rounded position (the outer pixels of the image excluded), weighted
    by a Gaussian of 1.5 scale around (x, y), each split linearly between its two nearest bins
    (bin i centred on i * 360 / n_bins degrees), then smoothed by [1 4 6 4 1] / 16."""
    level = np.asarray(level, np.float64)
    rows, cols = level.shape
    radius = int(np.round(4.5 * scale))
    cx, cy = int(np.round(x)), int(np.round(y))
    ys = np.arange(max(1, cy - radius), min(rows - 2, cy + radius) + 1)
    xs = np.arange(max(1, cx - radius), min(cols - 2, cx + radius) + 1)
    yy, xx = np.meshgrid(ys, xs, indexing="ij")
    gx = level[yy, xx + 1] - level[yy, xx - 1]
    gy = level[yy + 1, xx] - level[yy - 1, xx]
    weight = np.exp(-((xx - x) ** 2 + (yy - y) ** 2) / (2 * (1.5 * scale) ** 2))
    at = (np.degrees(np.arctan2(gy, gx)) % 360) * n_bins / 360
    lo = np.floor(at).astype(int) % n_bins
    frac = at - np.floor(at)
    raw = np.zeros(n_bins)
    np.add.at(raw, lo.ravel(), (weight * np.hypot(gx, gy) * (1 - frac)).ravel())
    np.add.at(raw, ((lo + 1) % n_bins).ravel(), (weight * np.hypot(gx, gy) * frac).ravel())
    return sum(c * np.roll(raw, s) for s, c in zip(range(-2, 3), np.array([1, 4, 6, 4, 1]) / 16))


def descriptor_sample_row(mag, ang, wx, wrow, cbin0, rbin0, cos_t, sin_t, angle, d=4, n=8):
    """(first bins, (8, len) weights) of a row of descriptor samples: sample j at cell
    coordinates (cbin0 + j cos_t, rbin0 - j sin_t), orientation bin (angle - ang) n / 360, weight
    mag * wrow * wx split trilinearly between the 2 x 2 x 2 nearest bins of the padded
    (d + 2) x (d + 2) x (n + 2) histogram; samples outside (-1, d)^2 get bin 0 and no weight."""
    mag, ang, wx = (np.asarray(a, np.float64) for a in (mag, ang, wx))
    j = np.arange(len(mag))
    cbin, rbin = cbin0 + j * cos_t, rbin0 - j * sin_t
    obin = (angle - ang) * n / 360
    inside = (rbin > -1) & (rbin < d) & (cbin > -1) & (cbin < d)
    r0, c0, o0 = np.floor(rbin), np.floor(cbin), np.floor(obin)
    fr, fc, fo = rbin - r0, cbin - c0, obin - o0
    m = mag * wrow * wx
    w = np.stack([m * (1 - fr) * (1 - fc) * (1 - fo), m * (1 - fr) * (1 - fc) * fo,
                  m * (1 - fr) * fc * (1 - fo), m * (1 - fr) * fc * fo,
                  m * fr * (1 - fc) * (1 - fo), m * fr * (1 - fc) * fo,
                  m * fr * fc * (1 - fo), m * fr * fc * fo])
    first = ((r0 + 1) * (d + 2) + c0 + 1) * (n + 2) + o0 % n
    return np.where(inside, first, 0).astype(np.int64), np.where(inside, w, 0.0)
