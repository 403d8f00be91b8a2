"""The virtual camera: renders a sequence of cards (a sorted calibration pass, a deal) as a frame stream.

Each shown object slides in from a frame edge (partial views first), rests for a few frames with a little
jitter, and slides out (or is replaced at once by the next card, without a gap). Blank frames, a hand, a card
back and a joker can be mixed in. Perturbations: position anywhere, rotation, upside down, scale, blur, sensor
noise, uneven light and glare.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import cv2
import numpy as np
import numpy.typing as npt

from dealer.core.cards import ALL_CARDS, Card
from dealer.core.errors import DealerError

from .deckart import CardArt, DeckArt, image_deck, synthetic_deck
from .layoutdeck import parse_layout_name
from .printdeck import print_deck
from .sources import Frame

Image = npt.NDArray[np.uint8]
Floats = npt.NDArray[np.float32]

Extra = Literal["blank", "hand", "back", "joker"]
Item = Card | Extra


@dataclass(frozen=True, slots=True)
class Perturbation:
    """Ranges the virtual camera draws each shown object's conditions from."""

    rotation: float = 15.0  # degrees either way
    upside_down: bool = True  # half the cards turned half a turn
    scale: tuple[float, float] = (0.7, 1.4)  # of the nominal card size
    blur: float = 1.3  # largest Gaussian sigma, pixels at 720 lines
    noise: float = 8.0  # sensor noise sigma (grey levels)
    light: float = 0.45  # deepest fall-off of an uneven light across the frame (0 = even)
    glare: float = 0.55  # strongest glare spot (share of full white)
    jitter: float = 1.0  # pixels of hand shake while resting
    glare_at_index: float = 0.0  # share of glare spots put right next to a corner index (the hardest place)
    back_to_back: float = 0.0  # share of cards put where the previous one lay in the next frame: no empty frame
    at_edge: float = 0.0  # share of cards lying against a frame edge (0-6 pixels off it), a glare spot beside them


LEVELS: dict[str, Perturbation] = {
    "calibration": Perturbation(2.0, False, (0.97, 1.03), 0.5, 2.0, 0.1, 0.0, 0.5),
    "clean": Perturbation(0.0, False, (1.0, 1.0), 0.0, 0.0, 0.0, 0.0, 0.0),
    "mild": Perturbation(6.0, True, (0.85, 1.2), 0.8, 4.0, 0.25, 0.25, 0.5),
    "strong": Perturbation(),
    # the scanner-miss hunt (#17): smaller and larger cards, glare beside the index, cards laid back to back
    "hard": Perturbation(scale=(0.6, 1.3), glare_at_index=0.5, back_to_back=0.3),
    # #31: every card against a frame edge, a glare spot between it and the edge or beside its index
    "edge": Perturbation(scale=(0.6, 1.3), glare=0.7, glare_at_index=0.5, at_edge=1.0),
}


@dataclass(frozen=True, slots=True)
class Pose:
    cx: float
    cy: float
    angle: float  # degrees, counter-clockwise on screen
    scale: float
    edge: int = -1  # the frame edge it lies against (0 left, 1 right, 2 top, 3 bottom), -1 none


@dataclass(frozen=True, slots=True)
class Lighting:
    gain: Floats  # multiplicative light field, at an eighth of the frame's size
    glare: Floats  # additive glare (grey levels), at an eighth of the frame's size
    blur: float
    background: Image  # the table under this light, full size

    def fields(self, x0: int, y0: int, width: int, height: int) -> tuple[Floats, Floats]:
        """Gain and glare over one region of the frame, enlarged from the small fields for that region only."""
        m = np.array([[1 / 8, 0, (x0 + 0.5) / 8 - 0.5], [0, 1 / 8, (y0 + 0.5) / 8 - 0.5]], np.float64)
        flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
        gain = cv2.warpAffine(self.gain, m, (width, height), flags=flags, borderMode=cv2.BORDER_REPLICATE)
        glare = cv2.warpAffine(self.glare, m, (width, height), flags=flags, borderMode=cv2.BORDER_REPLICATE)
        return np.asarray(gain, np.float32), np.asarray(glare, np.float32)


class VirtualCamera:
    """Renders ``items`` (cards or extras) shown one after another in front of the camera."""

    still = False

    def __init__(
        self,
        deck: DeckArt,
        items: Sequence[Item],
        perturbation: Perturbation | None = None,
        *,
        seed: int = 0,
        size: tuple[int, int] = (1280, 720),
        fps: float = 30.0,
        hold: int | tuple[int, int] = 8,
        slide: int = 4,
        gap: int = 2,
        card_height: float = 0.42,
    ) -> None:
        self.name = f"virtual:{deck.name}"
        self.deck = deck
        self.items = list(items)
        self.p = perturbation or LEVELS["strong"]
        self.rng = np.random.default_rng(seed)
        self.width, self.height = size
        self.fps = fps
        self.hold_range = (hold, hold) if isinstance(hold, int) else hold  # frames at rest, drawn per card
        self.hold, self.slide, self.gap = self.hold_range[0], slide, gap
        self.rests: list[int] = []  # frames each shown item lay still (for checks)
        self.laid_on: list[bool] = []  # whether each shown item took the previous card's place with no gap
        self._previous: tuple[CardArt, Pose] | None = None
        self.nominal = card_height * self.height  # card height in pixels at scale 1
        art_h = deck.back.mask.shape[0]
        self._art_scale = self.nominal / art_h
        self._background = self._make_background()
        self._noise = self._make_noise()
        self.shown: list[Item] = []  # items in the order actually rendered (for checks)

    # -- public ---------------------------------------------------------------------------------------------------

    def frames(self) -> Iterator[Frame]:
        number = 0
        for index, item in enumerate(self.items):
            self.shown.append(item)
            nxt = self.items[index + 1] if index + 1 < len(self.items) else None
            on_top = (
                self.p.back_to_back > 0
                and isinstance(nxt, Card)
                and isinstance(item, Card)
                and self.rng.random() < self.p.back_to_back
            )
            for image in self._item_frames(item, last=nxt is None, stay=on_top):
                yield Frame(image, number / self.fps, number)
                number += 1
            if on_top:
                continue  # the next card takes this one's place in the next frame: no gap, no slide
            self._previous = None
            if self.gap and nxt is not None:
                lighting = self._lighting()
                for _ in range(self.gap):
                    yield Frame(self._compose([], lighting), number / self.fps, number)
                    number += 1

    def close(self) -> None:
        pass

    def random_pose(self, item: Item) -> Pose:
        """A resting pose drawn from the perturbation ranges (position, rotation, upside down, scale)."""
        return self._rest_pose(self._art(item) if item != "blank" else self.deck.back)

    def render(self, item: Item, pose: Pose | None = None) -> Image:
        """One still frame of ``item`` at rest (a random pose unless given)."""
        if item == "blank":
            return self._compose([], self._lighting())
        art = self._art(item)
        pose = pose or self._rest_pose(art)
        return self._compose([(art, pose)], self._lighting(pose))

    # -- scenes ---------------------------------------------------------------------------------------------------

    def _art(self, item: Item) -> CardArt:
        if isinstance(item, Card):
            return self.deck.face(item)
        if item == "back":
            return self.deck.back
        if item == "joker":
            return self.deck.joker
        return _hand_art(self.deck.back.mask.shape[0], self.rng)

    def _item_frames(self, item: Item, last: bool, stay: bool = False) -> Iterator[Image]:
        lo, hi = self.hold_range
        hold = lo if lo == hi else int(self.rng.integers(lo, hi + 1))  # no draw for a fixed hold (seeds stay)
        self.rests.append(hold if item not in ("blank", "hand") else 0)
        self.laid_on.append(self._previous is not None)
        if item == "blank":
            lighting = self._lighting()
            for _ in range(hold):
                yield self._compose([], lighting)
            return
        art = self._art(item)
        rest = self._rest_pose(art)
        lighting = self._lighting(rest)
        if item == "hand":  # a hand passes over the table
            start, end = self._offscreen(rest, art), self._offscreen(rest, art)
            steps = self.hold + 2 * self.slide
            for k in range(steps):
                t = k / max(1, steps - 1)
                pose = Pose(start.cx + (end.cx - start.cx) * t, start.cy + (end.cy - start.cy) * t, rest.angle, 1.0)
                yield self._compose([(art, pose)], lighting)
            return
        under: list[tuple[CardArt, Pose]] = []
        if self._previous is not None:  # swapped for the previous card in one frame, in (nearly) the same place
            rest = self._rest_pose(art, near=self._previous[1])
            lighting = self._lighting(rest)
        else:
            start = self._offscreen(rest, art)
            for k in range(self.slide):
                yield self._compose([(art, _lerp(start, rest, (k + 1) / (self.slide + 1)))], lighting, moving=True)
        for _ in range(hold):
            j = self.p.jitter
            pose = replace(rest, cx=rest.cx + self.rng.uniform(-j, j), cy=rest.cy + self.rng.uniform(-j, j))
            yield self._compose([*under, (art, pose)], lighting)
        if stay:
            self._previous = (art, rest)
            return  # the next card takes this one's place
        if self.gap == 0 and not last:
            return  # replaced by the next card without a gap
        end = self._offscreen(rest, art)
        for k in range(self.slide):
            yield self._compose([(art, _lerp(rest, end, (k + 1) / (self.slide + 1)))], lighting, moving=True)

    def _rest_pose(self, art: CardArt, near: Pose | None = None) -> Pose:
        """A random resting pose inside the frame; with ``near``, centred within 12 pixels of it."""
        p = self.p
        scale = float(self.rng.uniform(*p.scale))
        angle = float(self.rng.uniform(-p.rotation, p.rotation))
        if p.upside_down and self.rng.random() < 0.5:
            angle += 180.0
        h, w = art.mask.shape
        s = self._art_scale * scale
        rad = math.radians(angle)
        half_w = 0.5 * s * (abs(w * math.cos(rad)) + abs(h * math.sin(rad)))
        half_h = 0.5 * s * (abs(w * math.sin(rad)) + abs(h * math.cos(rad)))
        margin = 16.0
        lo_x, hi_x = half_w + margin, self.width - half_w - margin
        lo_y, hi_y = half_h + margin, self.height - half_h - margin
        cx = float(self.rng.uniform(lo_x, hi_x)) if hi_x > lo_x else self.width / 2
        cy = float(self.rng.uniform(lo_y, hi_y)) if hi_y > lo_y else self.height / 2
        if near is not None:
            cx = min(max(near.cx + float(self.rng.uniform(-12, 12)), lo_x), max(lo_x, hi_x))
            cy = min(max(near.cy + float(self.rng.uniform(-12, 12)), lo_y), max(lo_y, hi_y))
        elif p.at_edge > 0 and self.rng.random() < p.at_edge:
            side = int(self.rng.integers(4))
            off = float(self.rng.uniform(0.0, 6.0))  # pixels between the card's outermost point and the edge
            if side == 0:
                cx = half_w + off
            elif side == 1:
                cx = self.width - half_w - off
            elif side == 2:
                cy = half_h + off
            else:
                cy = self.height - half_h - off
            return Pose(cx, cy, angle, scale, side)
        return Pose(cx, cy, angle, scale)

    def _offscreen(self, rest: Pose, art: CardArt) -> Pose:
        reach = self._art_scale * rest.scale * max(art.mask.shape) * 0.75
        side = int(self.rng.integers(4))
        if side == 0:
            return replace(rest, cx=-reach)
        if side == 1:
            return replace(rest, cx=self.width + reach)
        if side == 2:
            return replace(rest, cy=-reach)
        return replace(rest, cy=self.height + reach)

    # -- rendering ------------------------------------------------------------------------------------------------

    def _make_background(self) -> Floats:
        """A dark cloth at an eighth of the frame's size (it is smooth; lit and enlarged per shown object)."""
        small = self.rng.normal(0, 1, (self.height // 8, self.width // 8)).astype(np.float32)
        texture = cv2.GaussianBlur(small, (0, 0), 1.0)
        base: Floats = (np.array([38, 44, 40], np.float32) + 6.0 * texture[..., None]).astype(np.float32)
        return base

    def _make_noise(self) -> tuple[Image, Image]:
        sigma = self.p.noise
        shape = (self.height + 32, self.width + 32, 3)
        if sigma <= 0:
            zero = np.zeros(shape, np.uint8)
            return zero, zero
        noise = self.rng.normal(0.0, sigma, shape).astype(np.float32)
        return np.clip(noise, 0, 255).astype(np.uint8), np.clip(-noise, 0, 255).astype(np.uint8)

    def _lighting(self, near: Pose | None = None) -> Lighting:
        """Light for one shown object: a fall-off across the frame and, often, a glare spot near the card."""
        p = self.p
        sw, sh = self.width // 8, self.height // 8
        ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
        theta = self.rng.uniform(0, 2 * math.pi)
        ramp = xs / sw * math.cos(theta) + ys / sh * math.sin(theta)
        ramp = (ramp - ramp.min()) / max(1e-6, float(ramp.max() - ramp.min()))
        depth = self.rng.uniform(0, p.light)
        gain = (1.0 - depth * ramp).astype(np.float32)
        glare = np.zeros((sh, sw), np.float32)
        if p.glare > 0 and self.rng.random() < 0.7:
            card = self.nominal * (near.scale if near else 1.0) / 8
            cx, cy = (near.cx / 8, near.cy / 8) if near else (sw / 2, sh / 2)
            gx, gy = cx + self.rng.uniform(-0.5, 0.5) * card, cy + self.rng.uniform(-0.5, 0.5) * card
            if near is not None and p.glare_at_index > 0 and self.rng.random() < p.glare_at_index:
                # just beside a corner index: 0.36 and 0.42 of the card's height from its centre, turned with it
                corner = 1.0 if self.rng.random() < 0.5 else -1.0
                rad = math.radians(near.angle)
                dx, dy = -0.28 * card * corner, -0.40 * card * corner
                gx = cx + dx * math.cos(rad) + dy * math.sin(rad)
                gy = cy - dx * math.sin(rad) + dy * math.cos(rad)
            if near is not None and near.edge >= 0 and self.rng.random() < 0.5:
                # between the card and the edge it lies against, on the table and over the card's border
                along = self.rng.uniform(-0.4, 0.4) * card
                toward = self.rng.uniform(0.25, 0.5) * card
                dx, dy = ((-toward, along), (toward, along), (along, -toward), (along, toward))[near.edge]
                gx, gy = cx + dx, cy + dy
            radius = self.rng.uniform(0.08, 0.3) * card
            strength = self.rng.uniform(0.2, 1.0) * p.glare * 255.0
            glare = (strength * np.exp(-((xs - gx) ** 2 + (ys - gy) ** 2) / (2 * radius**2))).astype(np.float32)
        size = (self.width, self.height)
        lit = np.clip(self._background * gain[..., None] + glare[..., None] * 0.3, 0, 255).astype(np.uint8)
        background = np.asarray(cv2.resize(lit, size, interpolation=cv2.INTER_LINEAR), np.uint8)
        blur = float(self.rng.uniform(0, p.blur)) * self.height / 720.0
        return Lighting(gain.astype(np.float32), glare.astype(np.float32), blur, background)

    def _compose(self, objects: list[tuple[CardArt, Pose]], lighting: Lighting, moving: bool = False) -> Image:
        frame = lighting.background.copy()
        box: list[int] | None = None
        for art, pose in objects:
            placed = self._place(frame, art, pose, lighting)
            if placed is not None:
                x0, y0, x1, y1 = placed
                if box is None:
                    box = [x0, y0, x1, y1]
                else:
                    box = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
        sigma = lighting.blur + (1.2 if moving else 0.0)
        if box is not None and sigma > 0.3:
            pad = 8
            x0, y0 = max(0, box[0] - pad), max(0, box[1] - pad)
            x1, y1 = min(self.width, box[2] + pad), min(self.height, box[3] + pad)
            roi = frame[y0:y1, x0:x1]
            roi[:] = cv2.GaussianBlur(roi, (0, 0), sigma)
        pos, neg = self._noise
        ox, oy = int(self.rng.integers(0, 32)), int(self.rng.integers(0, 32))
        cv2.add(frame, pos[oy : oy + self.height, ox : ox + self.width], dst=frame)
        cv2.subtract(frame, neg[oy : oy + self.height, ox : ox + self.width], dst=frame)
        return frame

    def _place(self, frame: Image, art: CardArt, pose: Pose, lighting: Lighting) -> tuple[int, int, int, int] | None:
        h, w = art.mask.shape
        s = self._art_scale * pose.scale
        m = cv2.getRotationMatrix2D((w / 2.0, h / 2.0), pose.angle, s)
        m[0, 2] += pose.cx - w / 2.0
        m[1, 2] += pose.cy - h / 2.0
        corners = np.array([[0, 0, 1], [w, 0, 1], [w, h, 1], [0, h, 1]], np.float64) @ m.T
        x0 = max(0, math.floor(corners[:, 0].min()))
        y0 = max(0, math.floor(corners[:, 1].min()))
        x1 = min(self.width, math.ceil(corners[:, 0].max()) + 1)
        y1 = min(self.height, math.ceil(corners[:, 1].max()) + 1)
        if x1 <= x0 or y1 <= y0:
            return None
        m[0, 2] -= x0
        m[1, 2] -= y0
        size = (x1 - x0, y1 - y0)
        face = cv2.warpAffine(art.image, m, size, flags=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        gain, glare = lighting.fields(x0, y0, x1 - x0, y1 - y0)
        lit = face.astype(np.float32) * gain[..., None] + glare[..., None]
        face = np.clip(lit, 0, 255).astype(np.uint8)
        alpha = cv2.warpAffine(art.mask, m, size, flags=cv2.INTER_LINEAR).astype(np.float32) * (1.0 / 255.0)
        roi = frame[y0:y1, x0:x1]
        cv2.blendLinear(face, roi, alpha, 1.0 - alpha, dst=roi)
        return x0, y0, x1, y1


def _lerp(a: Pose, b: Pose, t: float) -> Pose:
    return Pose(a.cx + (b.cx - a.cx) * t, a.cy + (b.cy - a.cy) * t, a.angle + (b.angle - a.angle) * t, a.scale)


def _hand_art(card_h: int, rng: np.random.Generator) -> CardArt:
    """A flat skin-coloured hand (palm and fingers), about a card and a half long."""
    size = int(card_h * 1.5)
    mask = np.zeros((size, size), np.uint8)
    c = size // 2
    cv2.ellipse(mask, (c, int(size * 0.62)), (int(size * 0.2), int(size * 0.24)), 0, 0, 360, 255, -1, cv2.LINE_AA)
    for k, length in enumerate((0.34, 0.4, 0.38, 0.3)):
        x = int(c + (k - 1.5) * size * 0.1)
        top = int(size * (0.45 - length))
        cv2.line(mask, (x, int(size * 0.5)), (x, max(0, top)), 255, int(size * 0.075), cv2.LINE_AA)
    cv2.line(
        mask, (int(c - size * 0.17), int(size * 0.7)), (int(c - size * 0.38), int(size * 0.45)), 255, int(size * 0.08)
    )
    tone = np.array([120, 150, 200], np.float32) * float(rng.uniform(0.8, 1.15))
    image = np.empty((size, size, 3), np.uint8)
    image[:] = np.clip(tone, 0, 255).astype(np.uint8)
    return CardArt(image, mask)


def named_deck(name: str) -> DeckArt:
    """``synthetic`` / ``synthetic-2c-en``, ``synthetic-4c-fr``, ``print-4c-en`` (the independently drawn deck
    of :mod:`.printdeck`) … or a folder of face images."""
    for prefix, make in (("synthetic", synthetic_deck), ("print", print_deck)):
        if name.startswith(prefix):
            parts = name.split("-")[1:]
            default = 2 if prefix == "synthetic" else 4
            colours = int(parts[0][:-1]) if parts and parts[0].endswith("c") and parts[0][:-1].isdigit() else default
            index_set = parts[1] if len(parts) > 1 else "en"
            return make(colours, index_set)
    if name.startswith("layout"):
        return parse_layout_name(name)
    folder = Path(name)
    if folder.is_dir():
        return image_deck(folder)
    raise DealerError(
        "deck {name!r}: expected synthetic-<2|4>c-<en|fr|de|nl>, print-<2|4>c-<en|fr|de|nl>, "
        "layout-<beside|jumbo|above>-<2|4>c[-low] or a folder of card images",
        name=name,
    )


def virtual_source(spec: str) -> VirtualCamera:
    """Parse ``deck=synthetic-4c-fr,order=sorted|shuffled|deal,seed=1,level=strong,gap=2`` (all optional)."""
    options: dict[str, str] = {}
    for part in filter(None, spec.split(",")):
        key, sep, value = part.partition("=")
        if not sep:
            raise DealerError("virtual source: {part!r} is not key=value", part=part)
        options[key.strip()] = value.strip()
    known = {"deck", "order", "seed", "level", "gap", "hold", "slide"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise DealerError(
            "virtual source: unknown option(s) {unknown}; known: {known}",
            unknown=", ".join(unknown),
            known=", ".join(sorted(known)),
        )
    seed = int(options.get("seed", "0"))
    order = options.get("order", "sorted")
    cards: list[Item] = list(ALL_CARDS)
    if order == "shuffled":
        cards = [ALL_CARDS[i] for i in np.random.default_rng(seed).permutation(52)]
    elif order != "sorted":
        raise DealerError("virtual source: order {order!r} must be sorted or shuffled", order=order)
    level = options.get("level", "calibration" if order == "sorted" else "strong")
    if level not in LEVELS:
        raise DealerError(
            "virtual source: level {level!r} must be one of {levels}", level=level, levels=", ".join(LEVELS)
        )
    return VirtualCamera(
        named_deck(options.get("deck", "synthetic-2c-en")),
        cards,
        LEVELS[level],
        seed=seed,
        gap=int(options.get("gap", "2")),
        hold=int(options.get("hold", "8")),
        slide=int(options.get("slide", "4")),
    )
