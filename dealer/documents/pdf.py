"""Documents as PDF through fpdf2 and the embedded DejaVu Sans (the hand records' path): A4, a header with
the tournament, title, number and date, then the blocks, the signature lines and the hash note.

Several documents can go into one file (a day's record) after a table of contents.
"""

from __future__ import annotations

from collections.abc import Sequence

from fpdf import FPDF
from fpdf.fonts import FontFace
from fpdf.outline import OutlineSection

from dealer.handrecords.pdf import font_dir

from .model import Document, Fields, Table, Text

INK = (17, 17, 17)
GREY = (110, 110, 110)
LIGHT = (236, 236, 232)
MARGIN = 15.0
WIDTH = 210 - 2 * MARGIN


class _Pdf(FPDF):
    footer_text = ""
    page_label = "Page"

    def footer(self) -> None:
        self.set_y(-11)
        self.set_font("DejaVu", "", 7)
        self.set_text_color(*GREY)
        self.cell(0, 4, f"{self.footer_text} · {self.page_label} {self.page_no()}/{{nb}}", align="C")
        self.set_text_color(*INK)


def _new_pdf(title: str, page_label: str) -> _Pdf:
    fonts = font_dir()
    pdf = _Pdf(orientation="P", unit="mm", format="A4")
    pdf.set_title(title)
    pdf.set_creator("bridge-dealer")
    pdf.add_font("DejaVu", "", str(fonts / "DejaVuSans.ttf"))
    pdf.add_font("DejaVu", "B", str(fonts / "DejaVuSans-Bold.ttf"))
    pdf.set_margins(MARGIN, MARGIN, MARGIN)
    pdf.set_auto_page_break(True, margin=16)
    pdf.page_label = page_label
    pdf.set_text_color(*INK)
    return pdf


def _heading(pdf: FPDF, text: str) -> None:
    if not text:
        return
    if pdf.get_y() > 297 - 40:
        pdf.add_page()
    pdf.ln(2)
    pdf.set_font("DejaVu", "B", 10.5)
    pdf.multi_cell(WIDTH, 5.5, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(0.5)


def _fields(pdf: FPDF, block: Fields) -> None:
    _heading(pdf, block.heading)
    label_w = 68.0
    for label, value in block.items:
        pdf.set_font("DejaVu", "", 9)
        if pdf.get_y() > 297 - 26:
            pdf.add_page()
        y, page = pdf.get_y(), pdf.page_no()
        pdf.set_text_color(*GREY)
        pdf.multi_cell(label_w - 2, 4.6, label, align="L", new_x="LMARGIN", new_y="NEXT")
        end_label = pdf.get_y()
        pdf.set_xy(MARGIN + label_w, y)
        pdf.set_text_color(*INK)
        pdf.multi_cell(WIDTH - label_w, 4.6, value, align="L", new_x="LMARGIN", new_y="NEXT")
        if pdf.page_no() == page:  # continue below the taller of the label and the value
            pdf.set_y(max(pdf.get_y(), end_label))


def _table(pdf: FPDF, block: Table) -> None:
    _heading(pdf, block.heading)
    pdf.set_font("DejaVu", "", 8)
    if not block.rows:
        pdf.set_text_color(*GREY)
        pdf.multi_cell(WIDTH, 4.6, block.empty or "—", new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(*INK)
        return
    widths = block.widths or tuple(1.0 for _ in block.columns)
    with pdf.table(
        col_widths=widths,
        width=WIDTH,
        line_height=4.2,
        text_align="LEFT",
        headings_style=FontFace(emphasis="BOLD", fill_color=LIGHT),
        padding=0.8,
        first_row_as_headings=True,
    ) as table:
        table.row(block.columns)
        for row in block.rows:
            table.row(row)
    pdf.ln(1)


def _text(pdf: FPDF, block: Text) -> None:
    _heading(pdf, block.heading)
    pdf.set_font("DejaVu", "", 9)
    pdf.multi_cell(WIDTH, 4.6, block.text, align="L", new_x="LMARGIN", new_y="NEXT")


def _signatures(pdf: FPDF, doc: Document) -> None:
    if pdf.get_y() > 297 - 30 - 12 * len(doc.signatures):
        pdf.add_page()
    _heading(pdf, doc.labels.get("signatures", ""))
    pdf.ln(2)
    for sig in doc.signatures:
        y = pdf.get_y() + 7
        pdf.set_font("DejaVu", "", 9)
        pdf.text(MARGIN, y, sig.role)
        pdf.set_draw_color(*INK)
        pdf.set_line_width(0.2)
        pdf.line(MARGIN + 55, y + 0.5, MARGIN + 105, y + 0.5)
        pdf.line(MARGIN + 112, y + 0.5, MARGIN + WIDTH, y + 0.5)
        pdf.set_font("DejaVu", "", 9)
        if sig.name:
            pdf.text(MARGIN + 113, y - 0.6, sig.name)
        pdf.set_font("DejaVu", "", 6.5)
        pdf.set_text_color(*GREY)
        pdf.text(MARGIN + 55, y + 3.5, doc.labels.get("signature", ""))
        pdf.text(MARGIN + 112, y + 3.5, doc.labels.get("name", ""))
        pdf.set_text_color(*INK)
        pdf.set_y(y + 6)


def _document(pdf: _Pdf, doc: Document) -> None:
    pdf.footer_text = f"{doc.title} {doc.number_label}"
    pdf.add_page()
    pdf.start_section(f"{doc.number_label}  {doc.title}")
    pdf.set_font("DejaVu", "", 9)
    pdf.set_text_color(*GREY)
    pdf.multi_cell(WIDTH, 4.6, doc.tournament, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_text_color(*INK)
    pdf.ln(2)
    pdf.set_font("DejaVu", "B", 15)
    pdf.multi_cell(WIDTH, 7, doc.title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVu", "", 10)
    pdf.multi_cell(WIDTH, 5.5, f"{doc.number_label} · {doc.issued_text}", align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)
    pdf.set_draw_color(*GREY)
    pdf.line(MARGIN, pdf.get_y(), MARGIN + WIDTH, pdf.get_y())
    pdf.ln(1)
    for block in doc.blocks:
        if isinstance(block, Fields):
            _fields(pdf, block)
        elif isinstance(block, Table):
            _table(pdf, block)
        else:
            _text(pdf, block)
    pdf.ln(3)
    _signatures(pdf, doc)
    note = doc.labels.get("hash_note", "")
    if note:
        pdf.ln(4)
        pdf.set_font("DejaVu", "", 7)
        pdf.set_text_color(*GREY)
        pdf.multi_cell(WIDTH, 3.6, note, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(*INK)


def render_document(doc: Document) -> bytes:
    pdf = _new_pdf(f"{doc.title} {doc.number_label}", doc.labels.get("page", "Page"))
    _document(pdf, doc)
    return bytes(pdf.output())


def render_day(
    title: str, contents_heading: str, toc_columns: tuple[str, str, str], docs: Sequence[tuple[Document, str]],
    page_label: str,
) -> bytes:  # fmt: skip
    """One PDF: a table of contents (document, page, the issued file's SHA-256), then each document as issued
    (``docs``: the document and its issued file's hash), each on new pages and in the PDF outline."""
    pdf = _new_pdf(title, page_label)
    pdf.footer_text = title
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 15)
    pdf.multi_cell(WIDTH, 8, title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    hashes = [sha for _, sha in docs]

    def contents(p: FPDF, outline: list[OutlineSection]) -> None:
        rows = tuple((s.name, hashes[i] if i < len(hashes) else "", str(s.page_number)) for i, s in enumerate(outline))
        _table(p, Table(contents_heading, toc_columns, rows, (5.5, 6, 1)))

    pdf.insert_toc_placeholder(contents, pages=1 + len(docs) // 18, allow_extra_pages=True)
    for doc, _ in docs:
        _document(pdf, doc)
    return bytes(pdf.output())
