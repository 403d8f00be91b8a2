// The audience display: folds the public SSE stream into per-station state and draws compass layouts.
"use strict";
(() => {
  const { el } = Cards;
  const state = { stations: new Map(), bank: { formed: 0, target: 0, ledger_head: "" }, commitment: null };
  const emptyHands = () => Object.fromEntries(Cards.SEATS.map((s) => [s, { open: [], hidden: 0 }]));
  function station(name) {
    if (!state.stations.has(name)) {
      state.stations.set(name, { station: name, variant: 0, open_count: 0, status: "idle", attempt: 0,
        phase: "waiting", reason: null, bank_deal: null, board: null, boards: null, hands: emptyHands() });
    }
    return state.stations.get(name);
  }
  const dirty = new Set();
  let headerDirty = true;
  function apply(m) {
    switch (m.type) {
      case "snapshot":
        state.stations.clear();
        for (const st of m.stations) state.stations.set(st.station, st);
        state.bank = m.bank; state.commitment = m.commitment;
        document.getElementById("stations").replaceChildren();
        for (const name of state.stations.keys()) dirty.add(name);
        headerDirty = true;
        return;
      case "bank": state.bank = { formed: m.formed, target: m.target, ledger_head: m.ledger_head, ledger_size: m.ledger_size };
        headerDirty = true;
        for (const n of state.stations.keys()) dirty.add(n);
        return;
      case "commitment": state.commitment = m; headerDirty = true; return;
      case "cleared":  // the bank is formed (or the chief judge asked): no deal of formation stays on screen
        for (const st of (m.station == null ? [...state.stations.values()] : [station(m.station)])) {
          Object.assign(st, { phase: "cleared", attempt: 0, reason: null, bank_deal: null, hands: emptyHands() });
          dirty.add(st.station);
        }
        headerDirty = true;
        return;
    }
    const st = station(m.station);
    dirty.add(m.station);
    switch (m.type) {
      case "station": Object.assign(st, { variant: m.variant, open_count: m.open_count, status: m.status }); headerDirty = true; break;
      case "deal_started": Object.assign(st, { attempt: m.attempt, variant: m.variant, open_count: m.open_count,
        phase: "dealing", reason: null, bank_deal: null, hands: emptyHands() }); break;
      case "card": st.hands[m.seat].open.push(m.card); break;
      case "hidden": st.hands[m.seat].hidden = m.count; break;
      case "deal_voided": st.phase = "voided"; st.reason = m.reason; break;
      case "board": st.phase = "board"; st.board = m.board; st.boards = m.boards; headerDirty = true; break;
      case "deal_committed": st.phase = "committed"; st.bank_deal = m.bank_deal;
        state.bank.formed = m.formed; state.bank.ledger_head = m.ledger_head; headerDirty = true; break;
    }
  }
  function renderHeader() {
    const all = [...state.stations.values()];
    const closed = all.length > 0 && all.every((st) => st.variant === 1);  // variant 1: boards, no bank
    const b = closed ? { formed: Math.max(0, ...all.map((st) => st.board || 0)),
      target: Math.max(0, ...all.map((st) => st.boards || 0)) } : state.bank;
    const title = document.querySelector(".topbar h1");  // «Закрытая сдача» in variant 1, never «Открытая сдача»
    const remote = document.querySelector(".hall").dataset.stream === "remote";
    const key = (remote ? "audience.remote_title" : "audience.title") + (closed ? "_closed" : "");
    for (const e of all.length ? [title, document.querySelector("title")] : []) {  // none yet: as the server said
      if (e && e.dataset.i18n !== key) { e.dataset.i18n = key; e.textContent = I18N.t(key); }
    }
    const label = document.getElementById("banklabel");
    label.dataset.i18n = closed ? "audience.boards" : "audience.bank";
    label.textContent = I18N.t(label.dataset.i18n);
    document.getElementById("formed").textContent = b.formed;
    document.getElementById("target").textContent = b.target || "—";
    const p = document.getElementById("bankprogress");
    p.max = Math.max(1, b.target); p.value = Math.min(b.formed, p.max);
    // the anchor officials note in their acts: SIZE:HASH (`dealer bank verify --head SIZE:HASH` checks it)
    const bk = state.bank;
    const lh = document.getElementById("ledgerhead");
    lh.textContent = bk.ledger_head ? (bk.ledger_size ? bk.ledger_size + ":" : "") + bk.ledger_head.slice(0, 16) : "—";
    lh.title = bk.ledger_head || "";
    const c = document.getElementById("commitment");
    if (state.commitment) {
      c.hidden = false;
      const m = state.commitment;
      const fact = (key, value, cls) => {
        const box = el("span", "fact " + (cls || ""));
        const code = (cls || "").split(" ").includes("hash");  // K, the commitment and the head: monospace, break anywhere
        const shown = el(code ? "code" : "b", "factvalue");
        // V's separators are line-break opportunities (a phone splits «12345612/65432165/…» after a «/», never a number)
        for (const part of String(value).split(/(?<=[/,;])/)) shown.append(part, document.createElement("wbr"));
        box.append(el("span", "factlabel", I18N.t(key) + ":"), shown);
        return box;
      };
      c.dataset.state = m.state || "";
      // the headline says where the draw is: published, then revealed after play (or void)
      const headline = {revealed: "audience.commitment_revealed", void: "audience.commitment_void"}[m.state];
      c.replaceChildren(el("h2", "", I18N.t(headline || "audience.commitment")),
        fact("audience.commitment_label", m.label), fact("audience.commitment_deals", m.deals));
      const vformat = m.public_value_spec ? I18N.valueFormat(m.public_value_spec) : m.format;
      if (vformat) c.appendChild(fact("audience.value_format", vformat, "vformat"));
      if (m.value) c.appendChild(fact("audience.value", m.value, "vvalue"));
      if (m.state === "revealed") c.appendChild(fact("audience.revealed", "K " + m.secret, "vreveal hash"));
      if (m.state === "void") c.appendChild(fact("audience.void", m.reason, "vvoid"));
      c.appendChild(fact("audience.commitment_hash", m.commitment, "hash"));
      // the ledger head right after the commitment (SIZE:HASH): officials note it; `dealer draw verify --head` checks it
      if (m.head) c.appendChild(fact("audience.commitment_head", m.head, "hash"));
    } else c.hidden = true;
  }
  // After the target nothing is re-dealt: the audience is not promised a re-deal that will not come.
  function voidText(st) {
    const over = st.status === "target_reached" || st.status === "stopped" ||
      (state.bank.target > 0 && state.bank.formed >= state.bank.target && st.variant !== 1);
    return I18N.t(over ? "audience.voided_final" : "audience.voided", { reason: I18N.t("void." + st.reason) });
  }
  function renderStation(st) {
    let sec = document.querySelector(`section.station[data-station="${CSS.escape(st.station)}"]`);
    if (!sec) {
      sec = el("section", "station");
      sec.dataset.station = st.station;
      document.getElementById("stations").appendChild(sec);
    }
    const known = sec.dataset.attempt === String(st.attempt)
      ? new Set([...sec.querySelectorAll(".card")].map((c) => c.dataset.card)) : new Set();
    sec.dataset.phase = st.phase;
    sec.dataset.attempt = String(st.attempt);
    sec.dataset.variant = String(st.variant);
    const head = el("div", "stationhead");
    head.appendChild(el("span", "name", I18N.named("audience.station", st.station)));
    const closed = st.variant === 1;
    head.appendChild(el("span", "dealno", closed ? (st.board ? I18N.t("audience.board_of", { n: st.board, m: st.boards }) : "")
      : st.bank_deal ? I18N.t("audience.deal") + " " + st.bank_deal
      : st.attempt ? I18N.t("audience.attempt") + " " + st.attempt : ""));  // no «Попытка 0» once the bank is formed
    head.appendChild(el("span", "variant", !st.variant ? I18N.t("audience.variant")
      : closed ? I18N.t("audience.variant") + " " + st.variant + " — " + I18N.t("variant." + st.variant)
      : I18N.t("audience.variant_line", { v: st.variant, name: I18N.t("variant." + st.variant),
        open: I18N.t("audience.open_cards_n", { n: st.open_count }) })));
    head.appendChild(el("span", "status st-" + st.status, I18N.t("status." + st.status)));
    if (closed) {  // variant 1: face down into the boards; the audience sees progress only
      // one message at a time: the board in hand while dealing (or re-dealing after a void), the last one made
      // otherwise; «waiting» only before the first deal
      const box = el("div", "closedboard");
      const busy = st.phase === "dealing" || st.phase === "voided";
      const next = (st.board || 0) + 1;
      const boardText = busy ? (st.boards && next <= st.boards ? I18N.t("audience.board_of", { n: next, m: st.boards }) : "")
        : st.board ? I18N.t("audience.board_of", { n: st.board, m: st.boards }) : I18N.t("audience.waiting");
      box.appendChild(el("div", "boardno", boardText));
      if (st.phase === "dealing") box.appendChild(el("div", "phase", I18N.t("audience.closed_dealing")));
      else if (st.phase === "voided") box.appendChild(el("div", "phase", voidText(st)));
      box.appendChild(el("div", "closednote", I18N.t("audience.closed_note")));
      sec.replaceChildren(head, box);
      return;
    }
    const compass = el("div", "compass");
    for (const seat of Cards.SEATS) {
      const h = st.hands[seat];
      const box = el("div", "seat seat-" + seat);
      box.dataset.seat = seat;
      const name = el("div", "seatname");
      name.title = Cards.seatName(seat);
      name.append(el("span", "seatletter", Cards.seatLetter(seat)), el("span", "seatfull", " " + Cards.seatName(seat)));
      const hand = Cards.hand(h.open, h.hidden, known);
      name.appendChild(hand.querySelector(".backs"));  // the backs share the name's line: four suit rows below
      box.append(name, hand);
      compass.appendChild(box);
    }
    const centre = el("div", "centre");
    let msg = "";
    if (st.phase === "voided") msg = voidText(st);
    else if (st.phase === "committed") msg = I18N.t("audience.committed", { n: st.bank_deal });
    else if (st.phase === "waiting") msg = I18N.t("audience.waiting");
    else if (st.phase === "cleared") msg = I18N.t("audience.cleared");
    centre.appendChild(el("div", "compassrose", Cards.SEATS.map((s) => Cards.seatLetter(s)).join(" ")));
    centre.appendChild(el("div", "phase", msg));
    compass.appendChild(centre);
    sec.replaceChildren(head, compass);
    if (document.getElementById("stations").dataset.layout === "rows") fitLines(compass);
  }
  // a line a hand (two or more tables): a hand wider than its line is narrowed to fit, its cards keep their height
  function fitLines(compass) {
    for (const hand of compass.querySelectorAll(".seat .hand")) {
      hand.style.transform = "";
      const over = hand.scrollWidth / Math.max(1, hand.clientWidth);
      if (over > 1) hand.style.transform = `scaleX(${(1 / over).toFixed(4)})`;
    }
  }
  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      const main = document.getElementById("stations");
      const n = state.stations.size;
      main.dataset.count = String(n);
      // one table: the compass; more: a line a hand (app.css), two tables one above the other, four in 2 × 2
      main.dataset.layout = n > 1 ? "rows" : "compass";
      main.style.setProperty("--cols", String(n === 2 ? 1 : Math.ceil(Math.sqrt(n || 1))));
      if (headerDirty) { renderHeader(); headerDirty = false; }
      for (const name of dirty) renderStation(state.stations.get(name));
      dirty.clear();
    });
  }
  function redrawAll() { headerDirty = true; for (const n of state.stations.keys()) dirty.add(n); schedule(); }
  I18N.onChange(redrawAll);
  addEventListener("resize", redrawAll);
  const conn = document.getElementById("conn");
  function connect() {
    const stream = document.querySelector(".hall").dataset.stream === "remote" ? "remote" : "public";
    const es = new EventSource("/api/" + stream + "/events");
    es.onopen = () => { conn.dataset.i18n = "audience.live"; conn.textContent = I18N.t("audience.live"); conn.classList.add("live"); };
    es.onerror = () => { conn.dataset.i18n = "audience.connecting"; conn.textContent = I18N.t("audience.connecting"); conn.classList.remove("live"); };
    es.onmessage = (e) => { apply(JSON.parse(e.data)); schedule(); };
  }
  const body = document.body;
  const prefs = JSON.parse(localStorage.getItem("dealer-audience") || "{}");
  function setColours(four) {
    body.classList.toggle("colours4", four); body.classList.toggle("colours2", !four);
    const b = document.getElementById("colours");
    b.dataset.i18n = four ? "audience.colours2" : "audience.colours4"; b.textContent = I18N.t(b.dataset.i18n);
    prefs.four = four; localStorage.setItem("dealer-audience", JSON.stringify(prefs));
  }
  function setContrast(on) { body.classList.toggle("contrast", on); prefs.contrast = on; localStorage.setItem("dealer-audience", JSON.stringify(prefs)); }
  document.getElementById("colours").addEventListener("click", () => setColours(!body.classList.contains("colours4")));
  document.getElementById("contrast").addEventListener("click", () => setContrast(!body.classList.contains("contrast")));
  const q = new URLSearchParams(location.search);
  setColours(q.has("colours") ? q.get("colours") !== "2" : prefs.four !== false);
  setContrast(q.has("contrast") ? q.get("contrast") === "1" : !!prefs.contrast);
  connect();
})();
