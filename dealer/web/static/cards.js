// Cards as the core numbers them: index 0..51 = ♠A ♠K … ♠2 ♥A … ♣2; seats N E S W = 0..3.
"use strict";
const Cards = (() => {
  const SUITS = ["♠", "♥", "♦", "♣"];
  const SEATS = ["N", "E", "S", "W"];
  const suit = (c) => Math.floor(c / 13);
  const rank = (c) => c % 13;
  const rankText = (c) => I18N.t("rank.chars")[rank(c)];
  const label = (c) => SUITS[suit(c)] + rankText(c);
  const seatLetter = (s) => I18N.t("seat.letters")[SEATS.indexOf(s)];
  const seatName = (s) => I18N.t("seat.names")[SEATS.indexOf(s)];
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  // A hand: one row per suit (sorted high to low), then the card backs with their count.
  function hand(open, hidden, known) {
    const box = el("div", "hand");
    const sorted = [...open].sort((a, b) => a - b);
    for (let s = 0; s < 4; s++) {
      const row = el("div", "suitrow s" + s);
      row.appendChild(el("span", "suit s" + s, SUITS[s]));
      const cards = el("span", "ranks");
      for (const c of sorted.filter((c) => suit(c) === s)) {
        const card = el("span", "card s" + s, rankText(c));
        card.dataset.card = String(c);
        if (known && !known.has(String(c))) card.classList.add("new");
        card.title = label(c);
        cards.appendChild(card);
      }
      row.appendChild(cards);
      box.appendChild(row);
    }
    const backs = el("div", "backs");
    backs.dataset.hidden = String(hidden);
    if (hidden > 0) {
      const shown = Math.min(hidden, 13);
      const fan = el("span", "fan");
      for (let i = 0; i < shown; i++) fan.appendChild(el("span", "back"));
      backs.appendChild(fan);
      const n = el("span", "backcount", "× " + hidden + " ");
      n.appendChild(el("span", "", I18N.t("audience.hidden")));
      backs.appendChild(n);
    }
    box.appendChild(backs);
    return box;
  }
  return { SUITS, SEATS, suit, rank, rankText, label, seatLetter, seatName, el, hand };
})();
