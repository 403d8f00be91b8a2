// The technical judge's console: live over a WebSocket; blind unless "Show cards" is pressed (logged).
"use strict";
(() => {
  const { el } = Cards;
  const t = I18N.t;
  const stations = new Map();
  let bank = { formed: 0, target: 0 };
  let bankCopy = null;  // the second copy's state ([bank] copy); null: none configured
  let devices = [];
  let ws = null;
  let nextId = 1;
  const conn = document.getElementById("conn");
  // A refused command is said on the page (never in a dialog): next to the button pressed when the station's panel
  // has it, else in the notice under the top bar; the next command that succeeds clears it.
  const notice = document.getElementById("notice");
  const sent = new Map();  // command id -> { station, button } until its answer comes
  let pressed = null;  // the button whose click is sending a command now
  const FAULTS = ["jam", "misfeed", "unreadable_card", "duplicate_card", "cover_open", "hopper_empty"];

  // Connect, Disconnect and Reset void a deal in progress (reason "operator"): the judge is asked first.
  function guarded(cmd, station, extra) {
    const st = stations.get(station);
    if (st && (st.in_deal || st.status === "dealing")) {
      if (!confirm(t("judge.confirm_void", { action: t("judge." + (cmd === "connect" ? "connect" : cmd)), station: I18N.named("judge.station", station) }))) return;
      extra = Object.assign({ confirm: true }, extra || {});
    }
    send(cmd, station, extra);
  }
  function send(cmd, station, extra) {
    if (!ws || ws.readyState !== 1) return;
    const id = nextId++;
    if (cmd !== "devices") sent.set(id, { station, button: pressed });  // the device list comes back without an id
    ws.send(JSON.stringify(Object.assign({ cmd, station, id }, extra || {})));
  }
  let said = 0;  // counts what the notices said: a refusal filled late is not put back after a success cleared it
  function clearRefusals() {
    said += 1;
    for (const e of document.querySelectorAll(".notice")) e.replaceChildren();
  }
  function refused(m) {
    const from = sent.get(m.id) || {};
    sent.delete(m.id);
    clearRefusals();
    const sec = from.station !== undefined && from.station !== null ? panelOf(from.station) : null;
    const inPanel = sec && (!from.button || sec.contains(from.button));
    let box = notice;  // under the top bar, just above the device list (its Connect → buttons)
    let moved = false;
    if (inPanel) {  // under the row of the button pressed (or the panel's controls)
      box = sec._parts.msg;
      const row = from.button ? from.button.closest(".row") : null;
      const anchor = row && sec.contains(row) ? row : sec._parts.controlRow;
      if (anchor.nextElementSibling !== box) { anchor.after(box); moved = true; }
    }
    const text = t("judge.refused", { detail: m.message });
    // a live region moved and filled at once is taken for a new one and not read out: filled a moment later
    const mine = said;
    if (moved) setTimeout(() => { if (mine === said) box.textContent = text; }, 100); else box.textContent = text;
  }
  function guide(entry) {
    const p = Object.assign({}, entry.params);
    if (p.card !== null && p.card !== undefined) p.card = Cards.label(p.card);
    if (p.seat) p.seat = Cards.seatLetter(p.seat);
    if (p.kind) p.kind = t("fault." + p.kind) !== "fault." + p.kind ? t("fault." + p.kind) : t("void." + p.kind);
    return t(entry.key, p);
  }
  const ago = (ts) => t("judge.seconds_ago", { s: Math.max(0, Math.round(Date.now() / 1000 - ts)) });
  function button(key, onClick, cls) {
    const b = el("button", cls || "", t(key));
    b.type = "button"; b.dataset.i18n = key;
    b.addEventListener("click", () => { pressed = b; try { onClick(); } finally { pressed = null; } });
    return b;
  }
  function renderDevices() {
    const ul = document.getElementById("devicelist");
    ul.replaceChildren();
    if (!devices.length) { ul.appendChild(el("li", "", t("judge.no_devices"))); return; }
    for (const d of devices) {
      const li = el("li", "row");
      li.appendChild(el("code", "", d.id));
      li.appendChild(el("span", "", d.kind === "simulator" ? t("judge.sim_device") : d.description));
      for (const name of stations.keys()) {
        const b = button("judge.connect", () => guarded("connect", name, { device: d.id }));
        b.dataset.station = name;
        b.classList.add("connectdev");
        b.textContent = t("judge.connect") + " → " + name;
        b.dataset.i18n = "";
        li.appendChild(b);
      }
      ul.appendChild(li);
    }
  }
  const panelOf = (name) => document.querySelector(`section.stationpanel[data-station="${CSS.escape(name)}"]`);
  // Each station's panel is built once (buttons stay put while cards arrive); its contents are refreshed.
  function buildPanel(name) {
    const sec = el("section", "panel stationpanel");
    sec.dataset.station = name;
    const parts = { title: el("h2"), dev: el("div", "box"), ctl: el("div", "box"), health: el("div", "box health"),
      faults: el("div", "box faults"), voided: el("div", "box voided") };
    parts.facts = el("dl", "facts");
    const devrow = el("div", "row");
    parts.connect = button("judge.connect_sim", () => guarded("connect", name, { device: "simulator" }));
    parts.disconnect = button("judge.disconnect", () => guarded("disconnect", name), "danger");
    parts.reset = button("judge.reset", () => guarded("reset", name));
    devrow.append(parts.connect, parts.disconnect, parts.reset);
    parts.note = el("p", "note");
    parts.devTitle = el("h3", "", t("judge.device_info"));
    parts.dev.append(parts.devTitle, parts.facts, devrow, parts.note);
    parts.ctlTitle = el("h3", "", t("judge.progress"));
    parts.prog = el("progress");
    parts.progText = el("div", "progresstext");
    const row = el("div", "row controlrow");
    parts.start = button("judge.start", () => send("start", name), "primary");
    parts.pause = button("judge.pause", () => send("pause", name));
    parts.resume = button("judge.resume", () => send("resume", name));
    parts.stop = button("judge.stop", () => { if (confirm(t("judge.confirm_stop", { station: I18N.named("judge.station", name) }))) send("stop", name); }, "danger");
    parts.redeal = button("judge.redeal", () => send("redeal", name), "redeal");
    for (const k of ["start", "pause", "resume", "stop", "redeal"]) { parts[k].dataset.action = k; row.appendChild(parts[k]); }
    parts.connect.dataset.action = "connect"; parts.disconnect.dataset.action = "disconnect"; parts.reset.dataset.action = "reset";
    // a ledger write the bank could not take: the deal is kept and retried; the judge may retry now or void it
    parts.bankwait = el("div", "row bankwait");
    parts.bankwaitText = el("ul", "bankwaitlist");
    parts.bankwait.append(parts.bankwaitText, button("judge.retry_bank", () => send("retry_bank", name), "primary"),
      button("judge.void_pending", () => { if (confirm(t("judge.void_pending_confirm"))) send("void_pending", name); }, "danger"));
    const vis = el("div", "row");
    parts.blind = el("span", "blind", t("judge.blind"));
    parts.blind.dataset.i18n = "judge.blind";
    parts.show = button("judge.show_cards", () => { if (confirm(t("judge.show_confirm"))) send("show", name); });
    parts.hide = button("judge.hide_cards", () => send("hide", name));
    vis.append(parts.blind, parts.show, parts.hide);
    parts.inject = el("div", "row");
    parts.select = el("select");
    parts.injectButton = button("judge.inject", () => send("inject", name, { kind: parts.select.value }));
    parts.injectButton.dataset.action = "inject";
    parts.inject.append(parts.select, parts.injectButton);
    parts.current = el("div", "compass curdeal");
    parts.controlRow = row;
    parts.msg = el("p", "message error notice");
    parts.msg.setAttribute("role", "status");
    parts.msg.setAttribute("aria-live", "polite");
    parts.ctl.append(parts.ctlTitle, parts.prog, parts.progText, row, parts.msg, parts.bankwait, vis, parts.inject, parts.current);
    sec.append(parts.title, parts.dev, parts.ctl, parts.health, parts.faults, parts.voided);
    sec._parts = parts;
    document.getElementById("stationpanels").appendChild(sec);
    return sec;
  }
  const made = (st) => (st.closed ? st.boards_made : bank.formed);
  function renderProgress(st, p) {
    p.prog.max = Math.max(1, st.target); p.prog.value = Math.min(made(st), p.prog.max);
    p.progText.textContent = (st.closed ? t("audience.board_of", { n: made(st), m: st.target }) : made(st) + " / " + st.target) +
      (st.attempt ? " · " + t("audience.attempt") + " " + st.attempt : "") +  // no «Попытка 0» before the first deal
      " · " + st.cards_dealt + "/52 · " + t("judge.cards_read") + " " + st.health.cards_read +
      (st.pace ? " · " + t("judge.pace", { s: I18N.number(st.pace, 1) }) : "");
  }
  // Which buttons make sense in which state (the server refuses the others anyway).
  function enable(st, p) {
    const dev = !!st.device, s = st.status, done = s === "target_reached";
    const on = {
      connect: s !== "connecting" && !done,
      disconnect: dev,
      reset: dev && (st.in_deal || s === "needs_redeal"),
      start: dev && !st.running && !st.in_deal && (s === "ready" || s === "stopped"),
      pause: dev && st.running,
      resume: dev && !st.running && s === "paused",
      stop: dev && (st.running || s === "paused" || s === "needs_redeal"),
      redeal: dev && !st.in_deal && s === "needs_redeal",
      inject: dev && st.can_inject && !done,
    };
    for (const [k, v] of Object.entries(on)) {
      const b = k === "inject" ? p.injectButton : p[k];
      b.disabled = !v;
    }
    for (const b of document.querySelectorAll(`button.connectdev[data-station="${CSS.escape(st.station)}"]`)) b.disabled = !on.connect;
    // the machine may still be finishing a deal the station has already voided: say so instead of contradicting it
    const finishing = s === "needs_redeal" && st.device_status && st.device_status.state === "dealing";
    p.note.textContent = finishing ? t("judge.device_finishing") : "";
  }
  function renderEta() {
    const e = document.getElementById("eta");
    let rate = 0, target = 0, doneCount = 0, closed = false;
    for (const st of stations.values()) {
      target = st.target; closed = st.closed; doneCount = made(st);
      if (st.running && st.pace) rate += 1 / st.pace;
    }
    const left = Math.max(0, target - doneCount);
    if (!rate || !left) { e.textContent = left ? "" : (target ? t("judge.eta_done") : ""); return; }
    const secs = Math.round(left / rate);
    const mm = Math.floor(secs / 60), ss = String(secs % 60).padStart(2, "0");
    e.textContent = t(closed ? "judge.eta_boards" : "judge.eta", { n: left, time: mm + ":" + ss });
  }
  function renderStation(st) {
    const name = st.station;
    const sec = panelOf(name) || buildPanel(name);
    const p = sec._parts;
    sec.dataset.status = st.status;
    p.title.textContent = I18N.named("judge.station", name) + " — " + t("status." + st.status);
    p.devTitle.textContent = t("judge.device_info");
    p.ctlTitle.textContent = t(st.closed ? "judge.progress_closed" : "judge.progress");  // variant 1 has no bank
    p.facts.replaceChildren();
    const add = (k, v) => { p.facts.appendChild(el("dt", "", k)); p.facts.appendChild(el("dd", "", String(v))); };
    if (st.device) {
      for (const [k, v] of Object.entries(st.device)) {
        const label = t("device." + k) !== "device." + k ? t("device." + k) : k;
        const kind = k === "kind" && t("device.kind." + v) !== "device.kind." + v ? t("device.kind." + v) : null;
        add(label, kind || (Array.isArray(v) ? v.join(", ") : typeof v === "boolean" ? t(v ? "device.yes" : "device.no") : v));
      }
      if (st.device_status) {
        const stateKey = "status." + st.device_status.state;
        add(t("judge.status"), t(stateKey) === stateKey ? st.device_status.state : t(stateKey));
        add(t("judge.heartbeat"), ago(st.device_status.heartbeat));
        p.facts.lastChild.classList.add("heartbeat");
        p.facts.lastChild.dataset.ts = String(st.device_status.heartbeat);
      }
    } else add(t("judge.device_info"), "—");
    renderProgress(st, p);
    enable(st, p);
    p.redeal.classList.toggle("primary", st.status === "needs_redeal");
    const waiting = st.pending || [];
    p.bankwait.hidden = !waiting.length;
    p.bankwaitText.replaceChildren(...waiting.map((w) => el("li", "warning", t("judge.pending",
      { kind: t(w.kind === "commit" ? "judge.deals" : "judge.voided"), attempt: w.attempt, tries: w.tries, error: w.error }))));
    p.blind.hidden = p.show.hidden = st.show_cards;
    if (st.closed) p.show.hidden = true;  // variant 1: closed dealing, never shown
    p.hide.hidden = !st.show_cards;
    p.inject.hidden = !st.can_inject;
    const choice = p.select.value || FAULTS[0];
    p.select.replaceChildren(...FAULTS.map((f) => { const o = el("option", "", t("fault." + f)); o.value = f; return o; }));
    p.select.value = choice;
    p.current.replaceChildren();
    p.current.hidden = !(st.show_cards && st.current);
    if (st.show_cards && st.current) {
      for (const seat of Cards.SEATS) {
        const box = el("div", "seat seat-" + seat);
        box.appendChild(el("div", "seatname", Cards.seatLetter(seat)));
        box.appendChild(Cards.hand(st.current.filter((c) => c.seat === seat).map((c) => c.card), 0));
        p.current.appendChild(box);
      }
    }
    // health
    const h = st.health;
    const hf = el("dl", "facts");
    const addh = (k, v) => { hf.appendChild(el("dt", "", k)); hf.appendChild(el("dd", "", String(v))); };
    addh(t("judge.cards_read"), h.cards_read);
    hf.lastChild.classList.add("cardsread");
    addh(t("judge.deals"), h.deals + " (" + h.accepted + " ✓)");
    addh(t("judge.error_rate"), I18N.number(h.error_rate) + " — " + t("judge.norm"));
    for (const [k, v] of Object.entries(h.faults)) addh(t("fault." + k) !== "fault." + k ? t("fault." + k) : t("void." + k), v);
    p.health.replaceChildren(el("h3", "", t("judge.health")), hf);
    if (h.warning) p.health.appendChild(el("div", "warning", t("judge.norm_exceeded")));
    // faults and voids
    const fl = el("ul", "faultlist");
    if (!st.faults.length) fl.appendChild(el("li", "", t("judge.no_faults")));
    for (const f of st.faults) fl.appendChild(el("li", "guide", I18N.time(f.time * 1000) + " — " + guide(f)));
    p.faults.replaceChildren(el("h3", "", t("judge.faults")), fl);
    const table = el("table");
    const hr = el("tr");
    for (const k of ["judge.time", "audience.attempt", "judge.reason"]) hr.appendChild(el("th", "", t(k)));
    table.appendChild(hr);
    for (const v of st.voided) {
      const tr = el("tr");
      tr.appendChild(el("td", "", I18N.time(v.time * 1000)));
      tr.appendChild(el("td", "", String(v.attempt)));
      // the reason, then what to do; once only when the guidance begins with it («нечитаемая карта — нечитаемая
      // карта на 21-й карте: …» filled a phone's column twice)
      const reason = t("void." + v.reason), advice = guide(v);
      tr.appendChild(el("td", "", advice.toLocaleLowerCase().startsWith(reason.toLocaleLowerCase()) ? advice : reason + " — " + advice));
      table.appendChild(tr);
    }
    p.voided.replaceChildren(el("h3", "", t("judge.voided") + " (" + st.voided.length + ")"), table);
  }
  function renderBank() {
    const closed = [...stations.values()].find((st) => st.closed);  // variant 1: boards, no bank
    const b = closed ? { formed: closed.boards_made, target: closed.target } : bank;
    const label = document.getElementById("banklabel");
    label.dataset.i18n = closed ? "audience.boards" : "audience.bank";
    label.textContent = t(label.dataset.i18n);
    document.getElementById("formed").textContent = b.formed;
    document.getElementById("target").textContent = b.target;
    const p = document.getElementById("bankprogress");
    p.max = Math.max(1, b.target); p.value = Math.min(b.formed, p.max);
    // the ledger anchor, live: the judge notes SIZE:HASH in the act (`dealer bank verify --head SIZE:HASH`)
    document.getElementById("ledgerhead").textContent = bank.ledger_head ?
      (bank.ledger_size ? bank.ledger_size + ":" : "") + bank.ledger_head.slice(0, 16) : "—";
    const copy = document.getElementById("bankcopy");
    copy.hidden = !bankCopy;
    if (bankCopy) {  // behind: a deal committed now is on this laptop's disk only
      const key = bankCopy.error ? "judge.copy_failed" : bankCopy.same ? "judge.copy_same" : "judge.copy_behind";
      copy.textContent = t(key, { size: bankCopy.size, error: bankCopy.error || "" });
      copy.classList.toggle("warn", !bankCopy.same || !!bankCopy.error);
    }
    renderEta();
  }
  function renderAll() { renderBank(); for (const st of stations.values()) renderStation(st); renderDevices(); }
  let pending = false;
  function schedule() { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; renderAll(); }); } }
  function onMessage(m) {
    switch (m.type) {
      case "state":
        for (const st of m.stations) stations.set(st.station, st);
        bank = m.bank; bankCopy = m.bank_copy; break;
      case "bank_copy": bankCopy = m; break;
      case "station": stations.set(m.station, m); break;
      case "card": {
        const st = stations.get(m.station);
        if (!st) return;
        st.cards_dealt = m.position + 1; st.attempt = m.attempt; st.health.cards_read += 1; st.in_deal = true;
        if (st.show_cards && m.card !== undefined) {
          (st.current = st.current || []).push({ position: m.position, seat: m.seat, card: m.card });
          break;
        }
        const sec = document.querySelector(`section.stationpanel[data-station="${CSS.escape(m.station)}"]`);
        if (sec) {  // the health's count too (it said 147 beside the progress line's 151)
          renderProgress(st, sec._parts);
          const read = sec.querySelector(".health .cardsread");
          if (read) read.textContent = String(st.health.cards_read);
        }
        return;
      }
      case "heartbeat": {
        const st = stations.get(m.station);
        if (st) st.device_status = m.device_status;
        const hb = document.querySelector(`section.stationpanel[data-station="${CSS.escape(m.station)}"] .heartbeat`);
        if (hb) { hb.dataset.ts = String(m.device_status.heartbeat); hb.textContent = ago(m.device_status.heartbeat); }
        return;
      }
      case "committed": bank.formed = m.formed; break;  // the head comes with its size in "bank"
      case "bank": bank = m; break;
      case "board": { const st = stations.get(m.station); if (st) st.boards_made = m.board; break; }
      case "devices": clearRefusals(); devices = m.devices; break;  // the answer to a scan (or to connecting)
      case "error": document.title = t("judge.title"); refused(m); return;
      case "ok": sent.delete(m.id); clearRefusals(); return;
      default: break;
    }
    schedule();
  }
  // the connection's badge keeps its key: a language switch re-translates what it says (it said «Connecting…» on
  // a live console, the key of the page as served)
  function badge(key, live) { conn.dataset.i18n = key; conn.textContent = t(key); conn.classList.toggle("live", live); }
  // The server says a refusal in the language the socket was opened with: a new language opens a new socket
  // (an English page showed the Russian refusals of the language it was loaded in).
  function connect() {
    const sock = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/judge/ws?lang=" + I18N.lang);
    ws = sock;
    sock.onopen = () => { if (ws === sock) { badge("judge.connected", true); send("devices"); } };
    sock.onmessage = (e) => { if (ws === sock) onMessage(JSON.parse(e.data)); };
    sock.onclose = () => {
      if (ws !== sock) return;  // replaced by the socket of another language
      badge("judge.disconnected_ws", false); setTimeout(connect, 1000);
    };
  }
  document.getElementById("scan").addEventListener("click", () => send("devices"));
  I18N.onChange(() => {
    schedule();
    const old = ws;
    if (!old || old.readyState > 1) return;
    ws = null; old.close();
    badge("audience.connecting", false);
    connect();
  });
  setInterval(() => {  // only the "seconds ago" texts move by themselves
    for (const e of document.querySelectorAll(".heartbeat")) e.textContent = ago(Number(e.dataset.ts));
  }, 1000);
  connect();
})();
