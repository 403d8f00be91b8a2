"""Hand records as PDF, drawn with fpdf2 (a self-contained PDF engine: no browser, no external program).

A4, six boards a page (two columns, three rows), each with the compass diagram, HCP in the centre, dealer
and vulnerability, the double-dummy table and par. The font is DejaVu Sans (♠♥♦♣ and Cyrillic), taken from
matplotlib's bundled fonts and embedded (subset) in the file.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fpdf import FPDF

from dealer.core.errors import DealerError

from .view import BoardView, DocumentView

RED = (200, 16, 46)
INK = (17, 17, 17)
GREY = (120, 120, 120)
COLS, ROWS = 2, 3
MARGIN = 10.0
HEADER = 14.0
CELL_W = (210 - 2 * MARGIN) / COLS
CELL_H = (297 - 2 * MARGIN - HEADER - 6) / ROWS
LINE = 3.9


class FontMissingError(DealerError, RuntimeError):
    pass


def font_dir() -> Path:
    spec = importlib.util.find_spec("matplotlib")
    if spec is None or spec.origin is None:
        raise FontMissingError("matplotlib is not installed: its bundled DejaVu Sans font is needed for PDF output")
    path = Path(spec.origin).parent / "mpl-data" / "fonts" / "ttf"
    if not (path / "DejaVuSans.ttf").is_file():
        raise FontMissingError("DejaVuSans.ttf not found in {path}", path=path)
    return path


class _Pdf(FPDF):
    doc_title = ""
    page_label = "Page"

    def footer(self) -> None:
        self.set_y(-9)
        self.set_font("DejaVu", "", 7)
        self.set_text_color(*GREY)
        self.cell(0, 4, f"{self.doc_title} · {self.page_label} {self.page_no()}/{{nb}}", align="C")


def _fit(pdf: FPDF, text: str, width: float, size: float) -> None:
    """Use the largest font size up to ``size`` at which ``text`` fits in ``width``."""
    pdf.set_font_size(size)
    while size > 5 and pdf.get_string_width(text) > width:
        size -= 0.5
        pdf.set_font_size(size)


def _hand(pdf: FPDF, b: BoardView, seat: str, x: float, y: float, width: float) -> None:
    for i, (symbol, holding, red) in enumerate(b.hands[seat].suits):
        base = y + i * LINE
        pdf.set_font("DejaVu", "", 9)
        pdf.set_text_color(*(RED if red else INK))
        pdf.text(x, base, symbol)
        pdf.set_text_color(*INK)
        _fit(pdf, holding, width - 4.2, 9)
        pdf.text(x + 4.2, base, holding)


def _board(pdf: FPDF, b: BoardView, doc: DocumentView, x: float, y: float) -> None:
    w = CELL_W - 3
    pdf.set_draw_color(*GREY)
    pdf.set_line_width(0.2)
    pdf.rect(x, y, w, CELL_H - 3, round_corners=True, corner_radius=2, style="D")
    pdf.set_text_color(*INK)
    pdf.set_font("DejaVu", "B", 12)
    pdf.text(x + 2, y + 6, f"{doc.labels['board']} {b.number}")
    pdf.set_font("DejaVu", "", 8)
    meta = f"{doc.labels['dealer']}: {b.dealer} · {doc.labels['vul']}: {b.vulnerability}"
    pdf.text(x + w - 2 - pdf.get_string_width(meta), y + 6, meta)
    pdf.line(x + 1, y + 8, x + w - 1, y + 8)

    col = (w - 24) / 2  # width of the W and E columns; the compass is 24 mm wide
    top = y + 12
    _hand(pdf, b, "N", x + col + 1, top, w - col - 2)
    _hand(pdf, b, "W", x + 2, top + 4 * LINE + 1.5, col - 2)
    _hand(pdf, b, "E", x + col + 26, top + 4 * LINE + 1.5, col - 2)
    _hand(pdf, b, "S", x + col + 1, top + 8 * LINE + 3, w - col - 2)

    cx, cy, cw, ch = x + col + 1, top + 4 * LINE - 2, 22.0, 4 * LINE
    pdf.set_fill_color(244, 244, 241)
    pdf.rect(cx, cy, cw, ch, style="DF")
    pdf.set_font("DejaVu", "", 7)
    spots = {"N": (cx + cw / 2, cy + 3.2), "S": (cx + cw / 2, cy + ch - 1.2),
             "W": (cx + 3.5, cy + ch / 2 + 1), "E": (cx + cw - 3.5, cy + ch / 2 + 1)}  # fmt: skip
    for seat, (sx, sy) in spots.items():
        h = b.hands[seat]
        label = f"{h.seat} {h.hcp}"  # every seat's letter, as the HTML shows it
        pdf.set_font("DejaVu", "B" if h.seat == b.dealer else "", 7)
        pdf.text(sx - pdf.get_string_width(label) / 2, sy, label)
    pdf.set_font("DejaVu", "", 6)
    pdf.set_text_color(*RED)
    pdf.text(cx + cw / 2 - pdf.get_string_width(b.vulnerability) / 2, cy + ch / 2 + 1, b.vulnerability)
    pdf.set_text_color(*INK)

    # double-dummy table: declarers down, strains across
    tx, ty = x + 2, top + 11 * LINE + 4
    pdf.set_font("DejaVu", "", 7.5)
    widths = [6.0] + [6.2] * len(b.strains)
    heads = ["", *b.strains]
    for j, head in enumerate(heads):
        cx0 = tx + sum(widths[:j])
        pdf.set_fill_color(244, 244, 241)
        pdf.rect(cx0, ty, widths[j], LINE, style="DF")
        pdf.set_text_color(*(RED if head in ("♥", "♦") else INK))
        pdf.text(cx0 + (widths[j] - pdf.get_string_width(head)) / 2, ty + LINE - 1, head)
    pdf.set_text_color(*INK)
    for i, (who, tricks) in enumerate(b.dd_rows, start=1):
        cells = [who, *(str(t) for t in tricks)]
        for j, text in enumerate(cells):
            cx0 = tx + sum(widths[:j])
            pdf.rect(cx0, ty + i * LINE, widths[j], LINE, style="D")
            pdf.text(cx0 + (widths[j] - pdf.get_string_width(text)) / 2, ty + (i + 1) * LINE - 1, text)

    px = tx + sum(widths) + 3
    pdf.set_font("DejaVu", "B", 8)
    pdf.text(px, ty + 3, f"{doc.labels['par']}: {b.par_score}")
    pdf.set_font("DejaVu", "", 7.5)
    pdf.set_xy(px, ty + 4.5)
    pdf.multi_cell(x + w - px - 1, 3.4, b.par_contracts)


def render_pdf(doc: DocumentView) -> bytes:
    fonts = font_dir()
    pdf = _Pdf(orientation="P", unit="mm", format="A4")
    pdf.doc_title = doc.title
    pdf.page_label = doc.labels["page"]
    pdf.set_title(doc.title)
    pdf.set_creator("bridge-dealer")
    pdf.add_font("DejaVu", "", str(fonts / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(fonts / "DejaVuSans-Bold.ttf"))
    pdf.set_auto_page_break(False)
    per_page = COLS * ROWS
    boards = doc.boards or ()
    for k, b in enumerate(boards):
        slot = k % per_page
        if slot == 0:
            pdf.add_page()
            pdf.set_font("DejaVu", "B", 14)
            pdf.set_text_color(*INK)
            pdf.text(MARGIN, MARGIN + 5, doc.title)
            if doc.subtitle:
                pdf.set_font("DejaVu", "", 9)
                pdf.text(MARGIN, MARGIN + 10, doc.subtitle)
        col, row = slot % COLS, slot // COLS
        _board(pdf, b, doc, MARGIN + col * CELL_W, MARGIN + HEADER + row * CELL_H)
    if not boards:
        pdf.add_page()
        pdf.set_font("DejaVu", "B", 14)
        pdf.text(MARGIN, MARGIN + 5, doc.title)
    return bytes(pdf.output())
