// The audience display: folds the public SSE stream into per-station state and draws compass layouts.
"use strict";
(() => {
  const { el } = Cards;
  const state = { stations: new Map(), bank: { formed: 0, target: 0, ledger_head: "" }, commitment: null };
  const emptyHands = () => Object.fromEntries(Cards.SEATS.map((s) => [s, { open: [], hidden: 0 }]));
  function station(name) {
    if (!state.stations.has(name)) {
      state.stations.set(name, { station: name, variant: 0, open_count: 0, status: "idle", attempt: 0,
        phase: "waiting", reason: null, bank_deal: null, hands: emptyHands() });
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
      case "bank": state.bank = { formed: m.formed, target: m.target, ledger_head: m.ledger_head, ledger_size: m.ledger_size }; headerDirty = true; return;
      case "commitment": state.commitment = m; headerDirty = true; return;
    }
    const st = station(m.station);
    dirty.add(m.station);
    switch (m.type) {
      case "station": Object.assign(st, { variant: m.variant, open_count: m.open_count, status: m.status }); break;
      case "deal_started": Object.assign(st, { attempt: m.attempt, variant: m.variant, open_count: m.open_count,
        phase: "dealing", reason: null, bank_deal: null, hands: emptyHands() }); break;
      case "card": st.hands[m.seat].open.push(m.card); break;
      case "hidden": st.hands[m.seat].hidden = m.count; break;
      case "deal_voided": st.phase = "voided"; st.reason = m.reason; break;
      case "deal_committed": st.phase = "committed"; st.bank_deal = m.bank_deal;
        state.bank.formed = m.formed; state.bank.ledger_head = m.ledger_head; headerDirty = true; break;
    }
  }
  function renderHeader() {
    const b = state.bank;
    document.getElementById("formed").textContent = b.formed;
    document.getElementById("target").textContent = b.target;
    const p = document.getElementById("bankprogress");
    p.max = Math.max(1, b.target); p.value = Math.min(b.formed, p.max);
    // the anchor officials note in their acts: SIZE:HASH (`dealer bank verify --head SIZE:HASH` checks it)
    document.getElementById("ledgerhead").textContent = b.ledger_head ? (b.ledger_size ? b.ledger_size + ":" : "") + b.ledger_head.slice(0, 16) : "—";
    const c = document.getElementById("commitment");
    if (state.commitment) {
      c.hidden = false;
      const m = state.commitment;
      c.replaceChildren(el("b", "", I18N.t("audience.commitment")), el("span", "", " " + I18N.t("audience.commitment_label") +
        " " + m.label + " · " + m.deals + " · "), el("code", "", m.commitment));
      c.dataset.state = m.state || "";
      if (m.format) c.appendChild(el("div", "vformat", I18N.t("audience.value_format") + ": " + m.format));
      if (m.value) c.appendChild(el("div", "vvalue", I18N.t("audience.value") + ": ")).appendChild(el("code", "", m.value));
      if (m.state === "revealed") c.appendChild(el("div", "vreveal", I18N.t("audience.revealed") + ": K " + m.secret));
      if (m.state === "void") c.appendChild(el("div", "vvoid", I18N.t("audience.void") + ": " + m.reason));
    } else c.hidden = true;
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
    const head = el("div", "stationhead");
    head.appendChild(el("span", "name", I18N.t("audience.station") + " " + st.station));
    head.appendChild(el("span", "dealno", st.bank_deal ? I18N.t("audience.deal") + " " + st.bank_deal
      : I18N.t("audience.attempt") + " " + st.attempt));
    head.appendChild(el("span", "variant", I18N.t("audience.variant") + " " + st.variant +
      (st.variant ? " (" + I18N.t("variant." + st.variant) + ")" : "") + " · " + st.open_count + " " + I18N.t("audience.open_cards")));
    head.appendChild(el("span", "status st-" + st.status, I18N.t("status." + st.status)));
    const compass = el("div", "compass");
    for (const seat of Cards.SEATS) {
      const h = st.hands[seat];
      const box = el("div", "seat seat-" + seat);
      box.dataset.seat = seat;
      box.appendChild(el("div", "seatname", Cards.seatLetter(seat) + " " + Cards.seatName(seat)));
      box.appendChild(Cards.hand(h.open, h.hidden, known));
      compass.appendChild(box);
    }
    const centre = el("div", "centre");
    let msg = "";
    if (st.phase === "voided") msg = I18N.t("audience.voided", { reason: I18N.t("void." + st.reason) });
    else if (st.phase === "committed") msg = I18N.t("audience.committed", { n: st.bank_deal });
    else if (st.phase === "waiting") msg = I18N.t("audience.waiting");
    centre.appendChild(el("div", "compassrose", Cards.SEATS.map((s) => Cards.seatLetter(s)).join(" ")));
    centre.appendChild(el("div", "phase", msg));
    compass.appendChild(centre);
    sec.replaceChildren(head, compass);
  }
  let scheduled = false;
  function schedule() {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(() => {
      scheduled = false;
      if (headerDirty) { renderHeader(); headerDirty = false; }
      for (const name of dirty) renderStation(state.stations.get(name));
      dirty.clear();
      document.getElementById("stations").dataset.count = String(state.stations.size);
    });
  }
  function redrawAll() { headerDirty = true; for (const n of state.stations.keys()) dirty.add(n); schedule(); }
  I18N.onChange(redrawAll);
  const conn = document.getElementById("conn");
  function connect() {
    const es = new EventSource("/api/public/events");
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
