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

from .model import Block, Document, Fields, Table, Text

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
    pdf.ln(1.5)
    pdf.set_font("DejaVu", "B", 10.5)
    pdf.multi_cell(WIDTH, 5.0, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(0.5)


FIELD_LINE = 4.25  # mm a line of a field's label or value takes (9 pt)


def _fields(pdf: FPDF, block: Fields) -> None:
    _heading(pdf, block.heading)
    label_w = 74.0
    for label, value in block.items:
        pdf.set_font("DejaVu", "", 9)
        if pdf.get_y() > 297 - 26:
            pdf.add_page()
        y, page = pdf.get_y(), pdf.page_no()
        pdf.set_text_color(*GREY)
        pdf.multi_cell(label_w - 2, FIELD_LINE, label, align="L", new_x="LMARGIN", new_y="NEXT")
        end_label = pdf.get_y()
        pdf.set_xy(MARGIN + label_w, y)
        pdf.set_text_color(*INK)
        _value_font(pdf, value, WIDTH - label_w)
        pdf.multi_cell(WIDTH - label_w, FIELD_LINE, value, align="L", new_x="LMARGIN", new_y="NEXT")
        if pdf.page_no() == page:  # continue below the taller of the label and the value
            pdf.set_y(max(pdf.get_y(), end_label))


def _value_font(pdf: FPDF, value: str, width: float) -> None:
    """A field's value at 9 pt; a hash or id in it (a word longer than ``LONG_WORD``) set smaller, down to 7 pt,
    so that it keeps one line instead of breaking over two."""
    size = 9.0
    longest = max(value.split(), key=len, default="")
    while len(longest) > LONG_WORD and size > 7.0:
        pdf.set_font("DejaVu", "", size)
        if pdf.get_string_width(longest) <= width - 2 * pdf.c_margin - 0.5:
            break
        size -= 0.25
    pdf.set_font("DejaVu", "", size)


PADDING = 0.8  # a table cell's padding on each side, mm
LONG_WORD = 24  # longer "words" (hashes, ids) may wrap inside a cell; shorter ones never break
TABLE_FONT = 8.0
SMALLEST_FONT = 6.0


def _words(text: str) -> list[str]:
    return [w for w in text.split() if len(w) <= LONG_WORD]


def _fit_columns(pdf: FPDF, block: Table) -> tuple[float, tuple[float, ...]]:
    """The font size and the columns' widths (mm, summing to the page's width) at which no word shorter than
    ``LONG_WORD`` is broken inside a cell: each column gets at least its longest word (the header's in bold), the
    rest is shared as the block's relative widths ask; the font shrinks (down to 6 pt) when the words cannot fit."""
    wanted = block.widths or tuple(1.0 for _ in block.columns)
    total = sum(wanted)
    share = [WIDTH * w / total for w in wanted]
    size = TABLE_FONT
    while True:
        mins = []
        for i, column in enumerate(block.columns):
            pdf.set_font("DejaVu", "B", size)
            need = max((pdf.get_string_width(w) for w in _words(column)), default=0.0)
            pdf.set_font("DejaVu", "", size)
            for row in block.rows:
                if i < len(row):
                    need = max(need, max((pdf.get_string_width(w) for w in _words(row[i])), default=0.0))
            mins.append(need + 2 * PADDING + 0.6)
        if sum(mins) <= WIDTH or size <= SMALLEST_FONT:
            break
        size -= 0.5
    widths = list(share)
    for _ in range(len(widths)):
        short = [i for i, w in enumerate(widths) if w < mins[i] - 1e-9]
        if not short:
            break
        deficit = sum(mins[i] - widths[i] for i in short)
        for i in short:
            widths[i] = mins[i]
        slack = {i: widths[i] - mins[i] for i in range(len(widths)) if i not in short and widths[i] > mins[i]}
        room = sum(slack.values())
        if room <= 0:
            break
        for i, free in slack.items():
            widths[i] -= min(free, deficit * free / room)
    return size, tuple(widths)


def _table(pdf: FPDF, block: Table, fit: Table | None = None) -> None:
    """``fit``: the whole table when ``block`` is a part of it, so both parts get the same columns."""
    _heading(pdf, block.heading)
    pdf.set_font("DejaVu", "", TABLE_FONT)
    if not block.rows:
        pdf.set_text_color(*GREY)
        pdf.multi_cell(WIDTH, 4.6, block.empty or "—", new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(*INK)
        return
    size, widths = _fit_columns(pdf, fit or block)
    pdf.set_font("DejaVu", "", size)
    with pdf.table(
        col_widths=widths,
        width=sum(widths),
        line_height=4.2 * size / TABLE_FONT,
        text_align="LEFT",
        headings_style=FontFace(emphasis="BOLD", fill_color=LIGHT),
        padding=PADDING,
        first_row_as_headings=True,
    ) as table:
        table.row(block.columns)
        for row in block.rows:
            table.row(row)
    pdf.ln(1)


def _text(pdf: FPDF, block: Text) -> None:
    _heading(pdf, block.heading)
    if not block.heading:
        pdf.ln(1.5)  # set off from the block above
    pdf.set_font("DejaVu", "", 9)
    pdf.multi_cell(WIDTH, 4.6, block.text, align="L", new_x="LMARGIN", new_y="NEXT")


SIGNATURE_ROW = 10.0  # mm a signature line takes (with its captions)
NOTE_LINE = 3.6


def _signatures_height(pdf: FPDF, doc: Document) -> float:
    """The signature block with its hash note, in mm: it is drawn whole on one page."""
    height = 1.5 + 2.0 + SIGNATURE_ROW * len(doc.signatures)
    if doc.labels.get("signatures"):
        height += 7.5
    note = doc.labels.get("hash_note", "")
    if note:
        pdf.set_font("DejaVu", "", 7)
        lines = pdf.multi_cell(WIDTH, NOTE_LINE, note, dry_run=True, output="LINES")
        assert isinstance(lines, list)
        height += 4.0 + NOTE_LINE * len(lines)
    return height


def _signatures(pdf: FPDF, doc: Document) -> None:
    pdf.ln(1.5)
    _heading(pdf, doc.labels.get("signatures", ""))
    pdf.ln(2)
    for sig in doc.signatures:
        y = pdf.get_y() + 6
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
        pdf.set_y(y + SIGNATURE_ROW - 6)
    note = doc.labels.get("hash_note", "")
    if note:
        pdf.ln(4)
        pdf.set_font("DejaVu", "", 7)
        pdf.set_text_color(*GREY)
        pdf.multi_cell(WIDTH, NOTE_LINE, note, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(*INK)


def _split_tail(block: Block, carry: int) -> tuple[Block | None, Block]:
    """The block cut before its last ``carry`` rows or lines (a text goes whole): what stays and what moves on
    to the signatures' page. The moved part of a table repeats the columns' header; its heading is left off."""
    if isinstance(block, Table) and len(block.rows) > carry:
        head = Table(block.heading, block.columns, block.rows[:-carry], block.widths, block.empty)
        return head, Table("", block.columns, block.rows[-carry:], block.widths, block.empty)
    if isinstance(block, Fields) and len(block.items) > carry:
        return Fields(block.heading, block.items[:-carry]), Fields("", block.items[-carry:])
    return None, block


def _block(pdf: FPDF, block: Block, whole: Block | None = None) -> None:
    if isinstance(block, Fields):
        _fields(pdf, block)
    elif isinstance(block, Table):
        _table(pdf, block, whole if isinstance(whole, Table) else None)
    else:
        _text(pdf, block)


def _document(pdf: _Pdf, doc: Document, carry: int = 0, new_page: bool = True) -> bool:
    """Draw one document from a new page. The signatures are kept with content: with ``carry`` > 0 the last
    ``carry`` rows of the last block start a new page with them. Returns whether the signatures would have
    stood alone on a page (the caller then draws it again with ``carry``)."""
    if new_page:
        pdf.add_page()
    pdf.footer_text = f"{doc.title} {doc.number_label}"  # after add_page: the page before keeps its own footer
    pdf.start_section(f"{doc.number_label}  {doc.title}")
    pdf.set_font("DejaVu", "", 9)
    pdf.set_text_color(*GREY)
    pdf.multi_cell(WIDTH, 4.6, doc.tournament, align="C", new_x="LMARGIN", new_y="NEXT")
    if doc.event:
        pdf.multi_cell(WIDTH, 4.6, doc.event, align="C", new_x="LMARGIN", new_y="NEXT")
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
    blocks: list[tuple[Block, Block]] = [(b, b) for b in doc.blocks]  # (what to draw, the whole it is part of)
    tail: tuple[Block, Block] | None = None
    if carry and blocks:
        last = blocks.pop()[0]
        head, moved = _split_tail(last, carry)
        if head is not None:
            blocks.append((head, last))
        tail = (moved, last)
    for block, whole in blocks:
        _block(pdf, block, whole)
    if tail is not None:
        pdf.add_page()
        _block(pdf, *tail)
    alone = False
    if pdf.get_y() + _signatures_height(pdf, doc) > pdf.page_break_trigger:
        pdf.add_page()
        alone = True
    _signatures(pdf, doc)
    return alone


def _laid_out(doc: Document) -> int:
    """How many rows of the last block go with the signatures (0: they fit after the content as it falls)."""
    for carry in (0, 1, 2, 3):
        if not _document(_new_pdf(doc.title, ""), doc, carry):
            return carry
    return 1


def render_document(doc: Document) -> bytes:
    pdf = _new_pdf(f"{doc.title} {doc.number_label}", doc.labels.get("page", "Page"))
    _document(pdf, doc, _laid_out(doc))
    return bytes(pdf.output())


def _contents_pages(
    title: str, contents_heading: str, toc_columns: tuple[str, str, str], rows: list[tuple[str, str, str]]
) -> int:
    scratch = _new_pdf(title, "")
    scratch.add_page()
    _day_title(scratch, title)
    _table(scratch, Table(contents_heading, toc_columns, tuple(rows), (5.5, 6, 1)))
    return scratch.page_no()


def _day_title(pdf: FPDF, title: str) -> None:
    pdf.set_font("DejaVu", "B", 15)
    pdf.multi_cell(WIDTH, 8, title, align="C", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def render_day(
    title: str, contents_heading: str, toc_columns: tuple[str, str, str], docs: Sequence[tuple[Document, str]],
    page_label: str,
) -> bytes:  # fmt: skip
    """One PDF: a table of contents (document, page, the issued file's SHA-256), then each document as issued
    (``docs``: the document and its issued file's hash), each on new pages and in the PDF outline. The contents'
    pages are counted beforehand (its rows with three-digit page numbers), so the page numbers it prints, the
    footers' and the outline's agree and no page stands blank."""
    hashes = [sha for _, sha in docs]
    names = [f"{d.number_label}  {d.title}" for d, _ in docs]
    pages = _contents_pages(
        title, contents_heading, toc_columns, [(n, h, "999") for n, h in zip(names, hashes, strict=True)]
    )
    pdf = _new_pdf(title, page_label)
    pdf.footer_text = title
    pdf.add_page()
    _day_title(pdf, title)

    def contents(p: FPDF, outline: list[OutlineSection]) -> None:
        rows = tuple((s.name, hashes[i] if i < len(hashes) else "", str(s.page_number)) for i, s in enumerate(outline))
        _table(p, Table(contents_heading, toc_columns, rows, (5.5, 6, 1)))

    pdf.insert_toc_placeholder(contents, pages=pages)
    for k, (doc, _) in enumerate(docs):
        _document(pdf, doc, _laid_out(doc), new_page=k > 0)
    return bytes(pdf.output())
