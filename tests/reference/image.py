"""Pure-numpy reference for separable filtering: pad the image once with numpy.pad, then
correlate the two axes directly, in float64.

Border names are mirkit.image's; numpy.pad extends periodically past one image length, so
kernels longer than the image work as in mirkit (and in scipy.ndimage).
"""

import numpy as np

__all__ = ["NP_PAD", "SCIPY_MODE", "gaussian_filter", "gaussian_kernel", "sep_filter"]

#: mirkit border -> numpy.pad mode
NP_PAD = {"constant": "constant", "replicate": "edge", "reflect": "symmetric",
          "mirror": "reflect", "wrap": "wrap"}
#: mirkit border -> scipy.ndimage mode
SCIPY_MODE = {"constant": "constant", "replicate": "nearest", "reflect": "reflect",
              "mirror": "mirror", "wrap": "wrap"}


def sep_filter(image, kx, ky, border="reflect", cval=0.0, anchor=(None, None), convolve=False):
    """out[y, x] = sum_i sum_j ky[i] kx[j] padded[y + i - ay, x + j - ax], in float64; with
    `convolve`, padded[y - i + ay, x - j + ax], that is the correlation with the taps reversed
    (i -> len - 1 - i) and the anchor counted from the other end (a -> len - 1 - a). The anchor
    defaults to the centre, len // 2, in both modes."""
    kx, ky = np.asarray(kx, np.float64), np.asarray(ky, np.float64)
    ay = len(ky) // 2 if anchor[0] is None else anchor[0]
    ax = len(kx) // 2 if anchor[1] is None else anchor[1]
    if convolve:
        kx, ky, ax, ay = kx[::-1], ky[::-1], len(kx) - 1 - ax, len(ky) - 1 - ay
    img = np.asarray(image, np.float64)
    pad = [(ay, len(ky) - 1 - ay), (ax, len(kx) - 1 - ax)] + [(0, 0)] * (img.ndim - 2)
    extra = {"constant_values": cval} if border == "constant" else {}
    padded = np.pad(img, pad, mode=NP_PAD[border], **extra)
    h, w = img.shape[:2]
    rows = sum(ky[i] * padded[i:i + h] for i in range(len(ky)))
    return sum(kx[j] * rows[:, j:j + w] for j in range(len(kx)))


def gaussian_kernel(sigma, truncate=4.0):
    """The sampled Gaussian exp(-x^2 / (2 sigma^2)) at x = -r..r, r = int(truncate sigma + 0.5),
    divided by its sum (scipy.ndimage.gaussian_filter1d's kernel, written out)."""
    r = int(truncate * sigma + 0.5)
    x = np.arange(-r, r + 1, dtype=np.float64)
    phi = np.exp(-0.5 * x * x / (sigma * sigma))
    return phi / phi.sum()


def gaussian_filter(image, sigma, border="mirror", truncate=4.0, cval=0.0):
    """A Gaussian blur of the two image axes by sep_filter, in float64: sigma for both or as
    (sigma_y, sigma_x), 0 leaving an axis as it is."""
    sy, sx = np.broadcast_to(np.asarray(sigma, np.float64), 2)
    ky = gaussian_kernel(sy, truncate) if sy > 0 else np.ones(1)
    kx = gaussian_kernel(sx, truncate) if sx > 0 else np.ones(1)
    return sep_filter(image, kx, ky, border, cval)
