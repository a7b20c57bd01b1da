"""Plain numpy oracles for the SIFT scale space, DoG extrema, orientation histograms and
descriptor samples (mirkit.image._sift), and the comparison of keypoint sets with OpenCV's (shared by
tests/test_sift.py and bench/bench_keypoints.py)."""

import numpy as np
from .image import gaussian_filter


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
    """Lists of (n_scales + 3, H, W) float64 stacks by repeated Gaussian blurs (mirrored border,
    truncated at 4 sigma: scipy.ndimage.gaussian_filter(mode="mirror"), written in numpy)."""
    base = upsample2x(image) if upsample else np.asarray(image, np.float64)
    assumed = 0.5 * (2 if upsample else 1)
    base = gaussian_filter(base, np.sqrt(max(sigma**2 - assumed**2, 0.01)))
    k = 2.0 ** (1.0 / n_scales)
    octaves = []
    for _ in range(n_octaves):
        levels = [base]
        for i in range(1, n_scales + 3):
            prev = sigma * k ** (i - 1)
            inc = np.sqrt((prev * k) ** 2 - prev**2)
            levels.append(gaussian_filter(levels[-1], inc))
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


# ---- comparing keypoint sets (OpenCV's with mirkit's, either with the numpy extrema) ---------

#: The fields of mirkit's keypoint arrays (mirkit._sift.KEYPOINT_DTYPE), for OpenCV's keypoints.
KEYPOINT_FIELDS = np.dtype([("x", "<f4"), ("y", "<f4"), ("sigma", "<f4"), ("angle", "<f4"),
                            ("response", "<f4"), ("octave", "<i4")])


def opencv_keypoints(keypoints):
    """A list of cv2.KeyPoint as a KEYPOINT_FIELDS array in mirkit's conventions. OpenCV halves
    the doubled image's coordinates, which puts its centre-aligned pixel q at q / 2 instead of
    q / 2 - 0.25 (every octave inherits the +0.25 pixel shift); size is the diameter 2 sigma;
    the octave is the signed low byte of KeyPoint.octave; response is |D| on an image in
    [0, 1], as mirkit's."""
    k = np.zeros(len(keypoints), KEYPOINT_FIELDS)
    pt = np.array([p.pt for p in keypoints], np.float64).reshape(-1, 2) - 0.25
    k["x"], k["y"] = pt[:, 0], pt[:, 1]
    k["sigma"] = [p.size / 2 for p in keypoints]
    k["angle"] = [p.angle for p in keypoints]
    k["response"] = [p.response for p in keypoints]
    octave = np.array([p.octave & 255 for p in keypoints], np.int32)
    k["octave"] = np.where(octave >= 128, octave - 256, octave)
    return k


def twins(a, b):
    """For each keypoint of `a`, the index of the nearest keypoint of `b` within half a pixel of
    a's octave (0.25 input pixels on the doubled image, octave -1), 10% in sigma and 5 degrees
    in angle, or -1 where there is none."""
    d = np.hypot(a["x"][:, None] - b["x"], a["y"][:, None] - b["y"])
    ok = ((d < 0.5 * 2.0 ** a["octave"][:, None])
          & (np.abs(np.log(a["sigma"][:, None] / b["sigma"])) < 0.1)
          & (np.abs((a["angle"][:, None] - b["angle"] + 180) % 360 - 180) < 5))
    return np.where(ok.any(axis=1), np.where(ok, d, np.inf).argmin(axis=1), -1)


def descriptor_cosines(a, b):
    """Cosine similarity of the rows of two descriptor arrays, pair by pair."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def near_extrema(keypoints, image, n_scales=3, sigma=1.6, tol_px=0.75, tol_levels=1.5):
    """For each keypoint of the doubled image's octave (-1) of a uint8 or [0, 1] grey image,
    whether a 3 x 3 x 3 DoG extremum of the reference pyramid's first octave lies within
    tol_px input pixels and tol_levels scale levels of it. The search uses OpenCV's
    pre-threshold, 0.5 of the final contrast threshold 0.04 / n_scales (mirkit's, 0.8 of it,
    finds a subset); refinement moves a keypoint off its sample by less than one octave pixel
    in each axis unless it steps to a neighbour sample (0.5 input pixels on the doubled image).
    Returns (mask of the octave -1 keypoints, the boolean per such keypoint)."""
    img = np.asarray(image, np.float64)
    if np.asarray(image).dtype == np.uint8:
        img = img / 255
    extrema = np.array(brute_force_extrema(dog(gaussian_pyramid(img, 1, n_scales, sigma)),
                                           0.5 * 0.04 / n_scales), np.float64).reshape(-1, 4)
    ex, ey = extrema[:, 3] / 2 - 0.25, extrema[:, 2] / 2 - 0.25  # doubled pixel p: p / 2 - 1/4
    es = sigma * 2.0 ** (extrema[:, 1] / n_scales) / 2
    first = keypoints["octave"] == -1
    k = keypoints[first]
    d = np.hypot(k["x"][:, None] - ex, k["y"][:, None] - ey)
    levels = np.abs(np.log2(k["sigma"][:, None] / es)) * n_scales
    return first, ((d < tol_px) & (levels < tol_levels)).any(axis=1)
