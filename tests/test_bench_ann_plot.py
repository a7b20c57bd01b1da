"""``mirkit bench ann --plot FILE``: the recall-QPS figure holds the measured curves (checked
point by point on the figure's lines), is a real PNG / SVG file written atomically, and bad
--plot values fail in one line before anything is timed."""

from __future__ import annotations

import numpy as np
import pytest

from mirkit import cli
from mirkit.benchmarks import ann

pytest.importorskip("matplotlib")

PANELS = {
    "set A": {"mirkit IVF-Flat": [[1, 0.5, 9000.0, 17000.0], [4, 0.9, 3000.0, 5800.0],
                                  [2, 0.7, 5000.0, 9500.0]],
              "faiss IVFFlat": [[1, 0.5, 8000.0, 15000.0], [2, 0.7, 4500.0, 8800.0]]},
    "set B": {"mirkit IVF-PQ16": [[1, 0.3, 20000.0, 39000.0]]},
}


@pytest.mark.parametrize("ext, magic", [("png", b"\x89PNG\r\n\x1a\n"), ("svg", b"<?xml")])
def test_write_plot_draws_every_curve(tmp_path, ext, magic):
    path = tmp_path / f"curves.{ext}"
    fig = ann.write_plot(path, PANELS)
    assert path.read_bytes().startswith(magic)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left behind
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["set A", "set B"]
    for ax, curves in zip(axes, PANELS.values()):
        assert ax.get_yscale() == "log" and ax.get_xlabel() == "recall@10"
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert len(lines) == 2 * len(curves)
        for label, pts in curves.items():
            pts = sorted(pts, key=lambda pt: pt[1])
            for threads, col in ((1, 2), (2, 3)):
                line = lines[f"{label}, {threads} thread{'s' if threads > 1 else ''}"]
                np.testing.assert_array_equal(line.get_xdata(), [pt[1] for pt in pts])
                np.testing.assert_array_equal(line.get_ydata(), [pt[col] for pt in pts])


def test_plot_overwrites_atomically(tmp_path):
    path = tmp_path / "curves.png"
    path.write_bytes(b"old")
    ann.write_plot(path, PANELS)
    assert path.read_bytes().startswith(b"\x89PNG")


def _one_line_error(capsys, argv, *fragments):
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mirkit bench: error: ") and err.count("\n") == 1, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_bad_plot_option_fails_before_timing(tmp_path, capsys):
    _one_line_error(capsys, ["bench", "ann", "--quick", "--plot", str(tmp_path / "x.nosuch")],
                    "--plot", "extension")
    _one_line_error(capsys, ["bench", "ann", "--quick", "--plot",
                             str(tmp_path / "missing" / "x.png")], "does not exist")
    _one_line_error(capsys, ["bench", "evaluation", "--plot", str(tmp_path / "x.png")],
                    "--plot", "ann")
    assert list(tmp_path.iterdir()) == []


def test_measured_curves_plot(tmp_path, capsys):
    """The benchmark's own measurement on a small mixture, drawn: one solid and one dashed line
    per side, recall in [0, 1] and non-decreasing in n_probe along every mirkit curve."""
    pytest.importorskip("faiss")
    from mirkit.benchmarks.vectors import gaussian_mixture

    x = gaussian_mixture(4100, d=32, components=32, seed=2, spread=1.0)
    base, q = x[:4000], x[4000:]
    curves = ann._dataset("small", base, q, ann._truth(base, q), 16, 8, 50, 1)
    assert "| mirkit IVF-Flat | 16 |" in capsys.readouterr().out
    fig = ann.write_plot(tmp_path / "small.png", {"small": curves})
    (ax,) = fig.get_axes()
    assert len(ax.get_lines()) == 2 * len(curves) == 12
    for label, pts in curves.items():
        recalls = [pt[1] for pt in pts]
        assert all(0 <= r <= 1 for r in recalls)
        if label.startswith("mirkit"):
            assert recalls == sorted(recalls), label
        assert all(pt[2] > 0 and pt[3] > 0 for pt in pts)


@pytest.mark.slow
def test_bench_ann_quick_writes_plot(tmp_path, capsys):
    pytest.importorskip("faiss")
    path = tmp_path / "ann.svg"
    assert cli.main(["bench", "ann", "--quick", "--repeat", "1", "--plot", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"wrote the recall-QPS plot {path}" in out and "| mirkit IVF-Flat |" in out
    assert path.read_bytes().startswith(b"<?xml")
