// The director's console: bank status, seal, draw (commit, public value, run), reveal, bundle.
"use strict";
(() => {
  const t = I18N.t;
  const { el } = Cards;
  const msg = document.getElementById("message");
  async function api(method, path, body) {
    const r = await fetch(path, { method, headers: body ? { "Content-Type": "application/json" } : {},
      body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.detail || r.statusText);
    return data;
  }
  function say(text, error) { msg.textContent = (error ? t("director.error") + ": " : "") + text; }
  function renderDeal(d) {
    const box = el("div", "drawn");
    box.appendChild(el("div", "seatname", "#" + d.deal_id + (d.board ? " · " + d.board : "")));
    const compass = el("div", "compass curdeal");
    for (const seat of Cards.SEATS) {
      const s = el("div", "seat seat-" + seat);
      s.appendChild(el("div", "seatname", Cards.seatLetter(seat)));
      s.appendChild(Cards.hand(d.hands[seat], 0));
      compass.appendChild(s);
    }
    box.appendChild(compass);
    return box;
  }
  async function refresh() {
    let s;
    try { s = await api("GET", "/api/director/status"); } catch (e) { say(e.message, true); return; }
    document.getElementById("d-deals").textContent = s.deals + (s.target ? " / " + s.target : "");
    document.getElementById("d-eligible").textContent = s.eligible ?? "—";
    document.getElementById("d-ledger").textContent = s.ledger_size ?? "—";
    document.getElementById("d-head").textContent = s.ledger_head;
    const plan = s.plan;
    if (plan) document.getElementById("plan").textContent = t("director.plan", plan);
    const seals = document.getElementById("seals");
    seals.replaceChildren();
    for (const x of s.seals || []) seals.appendChild(el("li", "", x.time + " · " + x.size + " · " + x.root.slice(0, 16)));
    const draws = document.getElementById("draws");
    draws.replaceChildren();
    if (!s.draw_available) { draws.appendChild(el("p", "", t("director.unavailable"))); return; }
    for (const d of s.draws || []) {
      const box = el("div", "panel draw");
      box.dataset.label = d.label;
      box.dataset.state = d.state;
      box.appendChild(el("h3", "", d.label + " · " + t("director.state." + d.state) + " · " + d.deals));
      box.appendChild(el("code", "", d.commitment || ""));
      box.appendChild(el("p", "", t("director.public_value") + ": " + (d.public_value_spec ? d.public_value_spec.description : "") +
        (d.public_value ? " = " + d.public_value : "")));
      const row = el("div", "row");
      const mk = (key, fn) => { const b = el("button", "", t(key)); b.type = "button"; b.dataset.i18n = key;
        b.addEventListener("click", async () => { try { await fn(); say(t("director.done")); } catch (e) { say(e.message, true); } refresh(); });
        row.appendChild(b); };
      const L = encodeURIComponent(d.label);
      mk("director.publish", () => api("POST", `/api/director/draws/${L}/publish`));
      if (d.state === "committed") {
        const input = el("input"); input.name = "public_value"; input.placeholder = t("director.public_value");
        row.appendChild(input);
        const shown = el("code", "canonical", "");
        mk("director.check_value", async () => {
          shown.textContent = (await api("POST", `/api/director/draws/${L}/value`, { public_value: input.value, check: true })).public_value; });
        row.appendChild(shown);
        mk("director.enter_value", () => api("POST", `/api/director/draws/${L}/value`, { public_value: input.value }));
        mk("director.run", () => api("POST", `/api/director/draws/${L}/run`, { public_value: input.value }));
        const why = el("input"); why.name = "void_reason"; why.placeholder = t("director.void_reason");
        row.appendChild(why);
        mk("director.void", () => api("POST", `/api/director/draws/${L}/void`, { reason: why.value }));
      } else if (d.state === "public-value") mk("director.run", () => api("POST", `/api/director/draws/${L}/run`));
      if (d.state === "drawn") mk("director.reveal", () => api("POST", `/api/director/draws/${L}/reveal`));
      if (d.state === "drawn" || d.state === "revealed") {
        const a = el("a", "", t("director.bundle")); a.href = `/api/director/draws/${L}/bundle`; a.download = d.label + ".json";
        row.appendChild(a);
      }
      box.appendChild(row);
      if (d.drawn && d.drawn.length) {
        box.appendChild(el("h4", "", t("director.drawn")));
        const list = el("div", "drawnlist");
        for (const deal of d.drawn) list.appendChild(renderDeal(deal));
        box.appendChild(list);
      }
      draws.appendChild(box);
    }
  }
  document.getElementById("seal").addEventListener("click", async () => {
    try { await api("POST", "/api/director/seal"); say(t("director.done")); } catch (e) { say(e.message, true); }
    refresh();
  });
  document.getElementById("prepare").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    const body = { label: f.get("label"), replacement: f.get("replacement") === "on" };
    if (String(f.get("override") || "").trim()) body.override = f.get("override");
    if (String(f.get("witnesses")).trim()) { body.witnesses = f.get("witnesses"); body.rolls = Number(f.get("rolls")); body.faces = Number(f.get("faces")); }
    else { body.named = f.get("named"); body.numbers = Number(f.get("numbers")); body.min = 1; body.max = Number(f.get("max")); }
    try { await api("POST", "/api/director/draws", body); say(t("director.done")); }
    catch (e) { say(e.message, true); }
    refresh();
  });
  I18N.onChange(refresh);
  refresh();
  setInterval(refresh, 5000);
})();
