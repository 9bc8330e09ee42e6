"""The LFOC static study (``examples/sweeps/lfoc-static.toml``) run as a
sweep, its HTML report opened in a headless browser with the network cut
off, and the screenshot checked for the plots: the colour of every
algorithm the trade-off plot shows must be on screen, and the same page
with its images taken out must show none of them (so the check can
fail)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cachepart.sweep as sw
from cachepart.profile import TAB10

ROOT = Path(__file__).resolve().parents[2]
STUDY = ROOT / "examples" / "sweeps" / "lfoc-static.toml"
#: How far a pixel may be from a palette colour per channel (anti-aliasing
#: and the browser's colour handling).
TOLERANCE = 6


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    message = "chromium not found (scripts/setup.sh installs Debian's chromium)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def screenshot(page: Path, png: Path) -> None:
    """Loads ``page`` in headless chromium with every host unresolvable
    (the page must need no network) and saves a 1200 px wide screenshot."""
    subprocess.run(
        [browser(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--window-size=1200,7000",
         f"--screenshot={png}", page.as_uri()],
        check=True, capture_output=True, timeout=180,
    )


def palette_pixels(png: Path) -> dict[str, int]:
    """Pixels of each palette colour in the screenshot."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    counts = {c: 0 for c in TAB10}
    rgb = {c: tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in TAB10}
    for (r, g, b), n in ((px, n) for n, px in img.getcolors(maxcolors=1 << 24) or []):
        for c, (cr, cg, cb) in rgb.items():
            if abs(r - cr) <= TOLERANCE and abs(g - cg) <= TOLERANCE and abs(b - cb) <= TOLERANCE:
                counts[c] += n
    return counts


def test_the_lfoc_static_reports_plots_show_in_a_headless_browser(pbb, tmp_path):
    browser()
    plan = sw.plan(STUDY)
    algorithms = list(dict.fromkeys(r.labels["algorithm"] for r in plan.runs))
    assert len(plan.runs) == 900 and len(algorithms) == 6
    s = sw.run(plan, workers=2, out=tmp_path / "out", progress=False)
    assert (s.done + s.already_done, s.failed) == (900, 0)
    page = sw.report(tmp_path / "out", tmp_path / "lfoc-static.html")
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    assert text.count("<img") >= 3

    shot = tmp_path / "shot.png"
    screenshot(page, shot)
    seen = palette_pixels(shot)
    # The trade-off plot colours the algorithms other than stock (its
    # reference point, 1 on both axes) with the palette's first colours.
    plotted = [a for a in algorithms if a != "stock"]
    for colour in TAB10[: len(plotted)]:
        assert seen[colour] >= 50, f"{colour}: {seen[colour]} pixels; all: {seen}"

    # The same page without its images shows none of the plot colours.
    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<img [^>]*>", "", text))
    bare_shot = tmp_path / "bare.png"
    screenshot(bare, bare_shot)
    without = palette_pixels(bare_shot)
    for colour in TAB10[: len(plotted)]:
        assert without[colour] < 10, f"{colour} without images: {without}"

