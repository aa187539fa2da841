"""Draw the ClassMap Studio icon (PNG sizes + SVG) with code, so it can be regenerated and reviewed.

The picture: class points scattered in an embedding (coloured dots), a query (white ring)
and the filter circle around it that picks the few candidate classes, ClassMap's idea.
Run: python resources/make_icon.py   (writes classmap-studio.svg and classmap-studio-<N>.png here, and
the window icon classmap_gui/resources/classmap-studio.png that the app loads as package data)
"""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

HERE = Path(__file__).resolve().parent
BG = "#1f2a44"
COLOURS = ["#e4572e", "#17bebb", "#ffc914", "#76b041", "#a05cd5", "#f28ab2"]
# (x, y, colour index) in a 256 x 256 canvas; fixed so the icon never changes by accident.
POINTS = [(60, 70, 0), (92, 52, 1), (196, 64, 2), (206, 110, 3), (54, 176, 4), (86, 206, 5), (200, 196, 0),
          (168, 222, 1), (120, 118, 2), (146, 146, 3), (108, 160, 5), (158, 104, 4), (40, 120, 2), (222, 156, 5)]
QUERY = (132, 134)
RADIUS = 44


def svg() -> str:
    dots = "\n".join(f'  <circle cx="{x}" cy="{y}" r="11" fill="{COLOURS[c]}"/>' for x, y, c in POINTS)
    qx, qy = QUERY
    return f"""<svg xmlns="http://www.w3.org/2000/svg" width="256" height="256" viewBox="0 0 256 256">
  <rect x="8" y="8" width="240" height="240" rx="44" fill="{BG}"/>
  <circle cx="{qx}" cy="{qy}" r="{RADIUS}" fill="#ffffff" fill-opacity="0.12" stroke="#ffffff" stroke-width="5"/>
{dots}
  <circle cx="{qx}" cy="{qy}" r="9" fill="{BG}" stroke="#ffffff" stroke-width="5"/>
</svg>
"""


def _bgr(hex_colour: str) -> tuple[int, int, int]:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return b, g, r


def png(size: int) -> np.ndarray:
    """The icon as ``(size, size, 4)`` uint8 BGRA, drawn at 4x and shrunk for smooth edges."""
    s = 4 * size / 256.0
    big = np.zeros((4 * size, 4 * size, 4), np.uint8)

    def p(v: float) -> int:
        return int(round(v * s))

    colour = _bgr(BG) + (255,)
    r = p(44)
    cv2.rectangle(big, (p(8) + r, p(8)), (p(248) - r, p(248)), colour, -1)
    cv2.rectangle(big, (p(8), p(8) + r), (p(248), p(248) - r), colour, -1)
    for cx, cy in ((p(8) + r, p(8) + r), (p(248) - r, p(8) + r), (p(8) + r, p(248) - r), (p(248) - r, p(248) - r)):
        cv2.circle(big, (cx, cy), r, colour, -1, cv2.LINE_AA)
    q = (p(QUERY[0]), p(QUERY[1]))
    halo = big.copy()
    cv2.circle(halo, q, p(RADIUS), (255, 255, 255, 255), -1, cv2.LINE_AA)
    big = cv2.addWeighted(halo, 0.12, big, 0.88, 0)
    big[..., 3] = np.maximum(big[..., 3], 0)
    cv2.circle(big, q, p(RADIUS), (255, 255, 255, 255), max(1, p(5)), cv2.LINE_AA)
    for x, y, c in POINTS:
        cv2.circle(big, (p(x), p(y)), p(11), _bgr(COLOURS[c]) + (255,), -1, cv2.LINE_AA)
    cv2.circle(big, q, p(9), colour, -1, cv2.LINE_AA)
    cv2.circle(big, q, p(9), (255, 255, 255, 255), max(1, p(5)), cv2.LINE_AA)
    return cv2.resize(big, (size, size), interpolation=cv2.INTER_AREA)


def main() -> None:
    (HERE / "classmap-studio.svg").write_text(svg())
    for size in (48, 128, 256):
        cv2.imwrite(str(HERE / f"classmap-studio-{size}.png"), png(size))
    pkg = HERE.parent / "classmap_gui" / "resources"
    pkg.mkdir(exist_ok=True)
    cv2.imwrite(str(pkg / "classmap-studio.png"), png(256))


if __name__ == "__main__":
    main()
