// The director's console: bank status, seal, draw (commit, public value, run), reveal, bundle; then the session's
// deal files, its boards made on a machine (with progress) and its hand records. Anything irreversible asks first.
"use strict";
(() => {
  const t = I18N.t;
  const { el } = Cards;
  const msg = document.getElementById("message");
  const extras = new Map();  // label -> { files, records, boards } kept across refreshes
  const typed = new Map();  // label -> the public value being typed (a refresh must not wipe it)
  const deviceTyped = new Map();
  const whyTyped = new Map();  // label -> the void reason being typed
  const opened = new Set();  // "label/board": a drawn deal's diagram the chief judge unfolded
  // The status is drawn anew every 5 s: the field being typed in keeps the focus and the caret (the chief judge
  // typing V's 26 digits lost the field mid-way, the keys after a refresh went nowhere)
  function keepingFocus(draw) {
    const a = document.activeElement;
    const box = a && a.name && a.closest ? a.closest("[data-label]") : null;
    const at = box ? [box.dataset.label, a.name, a.selectionStart, a.selectionEnd] : null;
    draw();
    if (!at) return;
    const again = document.querySelector(`[data-label="${CSS.escape(at[0])}"] [name="${CSS.escape(at[1])}"]`);
    if (!again || again === a) return;
    again.focus();
    if (at[2] !== null && again.setSelectionRange) again.setSelectionRange(at[2], at[3]);
  }
  async function api(method, path, body) {
    const headers = { "X-Dealer-Lang": I18N.lang };  // errors come back in the page's language
    if (body) headers["Content-Type"] = "application/json";
    const r = await fetch(path, { method, headers,
      body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) {  // a 422 lists each bad field, each message naming its field in the page's language
      const detail = Array.isArray(data.detail) ? data.detail.map((d) => d.msg).join("; ") : data.detail;
      throw new Error(detail || r.statusText);
    }
    return data;
  }
  function say(text, error) {
    delete msg.dataset.i18n;  // the server's words stay as they came
    msg.textContent = (error ? t("director.error") + ": " : "") + text; msg.classList.toggle("error", !!error);
  }
  // a catalogue text keeps its key: a language switch re-translates it («Готово» stayed on an English page)
  function said(key) { msg.dataset.i18n = key; msg.textContent = t(key); msg.classList.remove("error"); }
  const locale = () => (I18N.lang === "ru" ? "ru-RU" : "en-GB");
  function human(ts) {  // an ISO time or seconds since the epoch, as people read it
    const d = typeof ts === "number" ? new Date(ts * 1000) : new Date(ts);
    return isNaN(d) ? String(ts) : d.toLocaleString(locale(), { dateStyle: "medium", timeStyle: "medium" });
  }
  const extra = (label) => { if (!extras.has(label)) extras.set(label, { files: [], records: [], boards: null }); return extras.get(label); };
  function button(key, fn, opts) {
    const b = el("button", (opts && opts.cls) || "", t(key));
    b.type = "button"; b.dataset.i18n = key;
    if (opts && opts.action) b.dataset.action = opts.action;
    b.addEventListener("click", async () => {
      if (opts && opts.confirm && !confirm(t(opts.confirm, opts.params || {}))) return;
      b.disabled = true;
      try { await fn(); said("director.done"); } catch (e) { say(e.message, true); }
      b.disabled = false;
      refresh();
    });
    return b;
  }
  function dealBox(d) {
    const compass = el("div", "compass curdeal");
    for (const seat of Cards.SEATS) {
      const s = el("div", "seat seat-" + seat);
      s.appendChild(el("div", "seatname", Cards.seatLetter(seat)));
      s.appendChild(Cards.hand(d.hands[seat], 0));
      compass.appendChild(s);
    }
    return compass;
  }
  const vul = (v) => t("vul." + v);
  // The drawn deals as boards: number, dealer, vulnerability, bank deal; the deal itself folded until the reveal.
  function boardsTable(label, drawn, revealed) {
    const table = el("table", "boards drawnlist");
    const hr = el("tr");
    const heads = ["director.board", "director.dealer", "director.vulnerability", "director.bank_deal", "director.deal"].map((k) => t(k));
    for (const h of heads) hr.appendChild(el("th", "", h));
    table.appendChild(hr);
    for (const d of drawn) {
      const tr = el("tr", "drawn");
      tr.dataset.board = String(d.board);
      tr.append(el("td", "boardno", String(d.board)), el("td", "", Cards.seatLetter(d.dealer)), el("td", "", vul(d.vulnerability)),
        el("td", "", "#" + d.deal_id));
      tr.querySelectorAll("td").forEach((td, k) => { td.dataset.label = heads[k]; });  // a phone shows each fact with its name
      const cell = el("td");
      const det = el("details");
      const key = label + "/" + d.board;
      det.open = revealed || opened.has(key);
      det.addEventListener("toggle", () => { if (det.open) opened.add(key); else opened.delete(key); });
      det.appendChild(el("summary", "", t(revealed ? "director.deal_revealed" : "director.deal_secret")));
      det.appendChild(dealBox(d));
      cell.appendChild(det);
      tr.appendChild(cell);
      table.appendChild(tr);
    }
    return table;
  }
  function fileLinks(label, names) {
    const ul = el("ul", "files");
    for (const n of names) {
      const a = el("a", "filelink", n);
      a.href = `/api/director/draws/${encodeURIComponent(label)}/files/${encodeURIComponent(n)}`;
      a.download = n;
      const li = el("li"); li.appendChild(a); ul.appendChild(li);
    }
    return ul;
  }
  // Files, boards on a machine, hand records: the same for a drawn session and for variant 1 boards.
  function exportSection(label, canRecords, name) {  // name: how dialogs call the session (variant 1: by the variant)
    const L = encodeURIComponent(label);
    const x = extra(label);
    const box = el("div", "export");
    box.dataset.label = label;
    box.appendChild(el("h4", "", t("director.export")));
    const row = el("div", "row");
    row.appendChild(button("director.files", async () => {
      const r = await api("POST", `/api/director/draws/${L}/files`, { formats: ["pbn", "dlm"] });
      x.files = r.files;
    }, { action: "files" }));
    const device = el("input"); device.name = "device"; device.placeholder = t("director.device_hint");
    device.value = deviceTyped.get(label) || "simulator";
    device.addEventListener("input", () => deviceTyped.set(label, device.value));
    const running = x.boards && x.boards.state === "running";
    const make = button("director.make_boards", async () => {
      x.boards = await api("POST", `/api/director/draws/${L}/boards`, { device: device.value || "simulator" });
      poll(label);
    }, { action: "boards", confirm: "director.confirm_boards", params: { label: name || label } });
    make.disabled = running;
    const recs = button("director.handrecords", async () => {
      const r = await api("POST", `/api/director/draws/${L}/handrecords`, { lang: I18N.lang });
      x.records = r.files;
    }, { action: "handrecords" });
    recs.disabled = !canRecords;
    if (!canRecords) recs.title = t("director.records_after_reveal");
    row.append(device, make, recs);
    box.appendChild(row);
    if (x.files.length) box.append(el("div", "", t("director.files_written")), fileLinks(label, x.files));
    if (x.boards) {
      const b = x.boards;
      const prog = el("progress"); prog.max = Math.max(1, b.copies_total); prog.value = b.copies_done;
      const line = el("div", "boardsprogress");
      line.dataset.state = b.state;
      line.append(prog, el("span", "", " " + t("director.copies_made", { n: b.copies_done, m: b.copies_total }) + " · " +
        t("director.job." + b.state) + (b.current ? " · " + b.current : "") +
        (b.fouls && b.fouls.length ? " · " + t("director.fouls", { n: b.fouls.length }) : "") + (b.error ? " · " + b.error : "")));
      box.appendChild(line);
    }
    if (x.records.length) box.append(el("div", "", t("director.records_written")), fileLinks(label, x.records));
    return box;
  }
  const polling = new Set();
  async function poll(label) {
    if (polling.has(label)) return;
    polling.add(label);
    try {
      for (;;) {
        const view = await api("GET", `/api/director/draws/${encodeURIComponent(label)}/boards`);
        extra(label).boards = view;
        keepingFocus(render);
        if (view.state !== "running") break;
        await new Promise((r) => setTimeout(r, 700));
      }
    } catch (e) { say(e.message, true); }
    polling.delete(label);
  }
  let last = null;
  // The chief judge's key (docs/custody.md): set up once, unlocked with the passphrase for the steps that need it.
  let custody = null;
  async function refreshCustody() {
    try { custody = await api("GET", "/api/director/custody"); } catch (e) { return; }
    const state = document.getElementById("custody-state");
    const form = document.getElementById("custody-form");
    const open = document.getElementById("custody-open");
    const stateKey = { none: "custody.state_none", locked: "custody.state_locked", unlocked: "custody.state_unlocked", elsewhere: "custody.state_elsewhere" }[custody.state];
    state.textContent = t(stateKey, { minutes: custody.idle_lock_minutes, key: (custody.public_key || "").slice(0, 16) });
    form.hidden = custody.state === "unlocked";
    open.dataset.i18n = custody.state === "none" ? "custody.setup" : "custody.unlock";
    open.textContent = t(open.dataset.i18n);
    document.getElementById("custody-lock").hidden = custody.state !== "unlocked";
  }
  document.getElementById("custody-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = ev.target.elements.passphrase;
    const path = custody && custody.state === "none" ? "/api/director/custody/setup" : "/api/director/custody/unlock";
    try { await api("POST", path, { passphrase: input.value }); said("custody.opened"); } catch (e) { say(e.message, true); }
    input.value = "";
    await refreshCustody();
    refresh();
  });
  document.getElementById("clear-hall").addEventListener("click", async () => {
    try { await api("POST", "/api/director/hall/clear"); said("director.done"); } catch (e) { say(e.message, true); }
  });
  document.getElementById("custody-lock").addEventListener("click", async () => {
    try { await api("POST", "/api/director/custody/lock"); said("custody.locked"); } catch (e) { say(e.message, true); }
    await refreshCustody();
    refresh();
  });
  async function refresh() {
    refreshCustody();
    try { last = await api("GET", "/api/director/status"); } catch (e) { say(e.message, true); return; }
    keepingFocus(render);
  }
  function render() {
    const s = last;
    if (!s) return;
    document.getElementById("d-deals").textContent = s.deals + (s.target ? " / " + s.target : "");
    document.getElementById("d-eligible").textContent = s.eligible ?? "—";
    document.getElementById("d-ledger").textContent = s.ledger_size ?? "—";
    // SIZE:HASH, as the hall shows it and `dealer bank verify --head` takes it
    document.getElementById("d-head").textContent = s.ledger_head ? (s.ledger_size ? s.ledger_size + ":" : "") + s.ledger_head : "—";
    const plan = s.plan;
    if (plan) document.getElementById("plan").textContent = t("director.plan", plan);
    const seals = document.getElementById("seals");
    seals.replaceChildren();
    for (const x of s.seals || []) {
      seals.appendChild(el("li", "", t("director.seal_line", { time: human(x.time), size: x.size, root: x.root.slice(0, 16) })));
    }
    const closed = document.getElementById("closed");
    closed.hidden = !s.closed;
    if (s.closed) {
      const c = s.closed;
      const body = el("div");
      body.appendChild(el("p", "", t("director.closed_progress", { n: c.made, m: c.total })));
      const table = el("table", "boards closedboards");
      const hr = el("tr");
      for (const k of ["director.board", "director.dealer", "director.vulnerability", "director.copies", "judge.station", "judge.time"]) hr.appendChild(el("th", "", t(k)));
      table.appendChild(hr);
      for (const b of c.boards) {
        const tr = el("tr");
        tr.append(el("td", "boardno", String(b.board)), el("td", "", Cards.seatLetter(b.dealer)), el("td", "", vul(b.vulnerability)),
          el("td", "", String(b.copies)), el("td", "", b.station), el("td", "", human(b.time)));
        table.appendChild(tr);
      }
      body.appendChild(table);
      if (c.made) body.appendChild(exportSection(c.label, true, t("audience.title_closed")));
      document.getElementById("closedbody").replaceChildren(body);
    }
    const draws = document.getElementById("draws");
    draws.replaceChildren();
    if (!s.draw_available) { draws.appendChild(el("p", "", t("director.unavailable"))); return; }
    for (const d of s.draws || []) {
      const box = el("div", "panel draw");
      box.dataset.label = d.label;
      box.dataset.state = d.state;
      box.appendChild(el("h3", "", d.label + " · " + t("director.state." + d.state) + " · " + t("director.deals_n", { n: d.deals })));
      box.appendChild(el("code", "hash", d.commitment || ""));
      // what V will be in the page's language (the commitment's own description is in the preparer's: an English
      // page showed «бросков кости d6 каждым свидетелем…»), then V once entered
      if (d.public_value_spec) box.appendChild(el("p", "vformat", t("audience.value_format") + ": " + I18N.valueFormat(d.public_value_spec)));
      if (d.public_value) box.appendChild(el("p", "vvalue", t("audience.value") + ": " + d.public_value));
      const row = el("div", "row");
      const L = encodeURIComponent(d.label);
      row.appendChild(button("director.publish", () => api("POST", `/api/director/draws/${L}/publish`),
        { action: "publish", confirm: "director.confirm_publish", params: { label: d.label } }));
      if (d.state === "committed") {
        const input = el("input"); input.name = "public_value"; input.placeholder = t("director.public_value");
        input.value = typed.get(d.label) || "";
        input.addEventListener("input", () => typed.set(d.label, input.value));
        row.appendChild(input);
        const shown = el("code", "canonical", "");
        row.appendChild(button("director.check_value", async () => {
          shown.textContent = (await api("POST", `/api/director/draws/${L}/value`, { public_value: input.value, check: true })).public_value;
        }, { action: "check_value" }));
        row.appendChild(shown);
        row.appendChild(button("director.enter_value", () => api("POST", `/api/director/draws/${L}/value`, { public_value: input.value }),
          { action: "enter_value", confirm: "director.confirm_value", params: { label: d.label } }));
        row.appendChild(button("director.run", () => api("POST", `/api/director/draws/${L}/run`, { public_value: input.value }),
          { action: "run", confirm: "director.confirm_run", params: { label: d.label } }));
        const why = el("input"); why.name = "void_reason"; why.placeholder = t("director.void_reason");
        why.value = whyTyped.get(d.label) || "";
        why.addEventListener("input", () => whyTyped.set(d.label, why.value));
        row.appendChild(why);
        row.appendChild(button("director.void", () => api("POST", `/api/director/draws/${L}/void`, { reason: why.value }),
          { action: "void", cls: "danger", confirm: "director.confirm_void", params: { label: d.label } }));
      } else if (d.state === "public-value") {
        row.appendChild(button("director.run", () => api("POST", `/api/director/draws/${L}/run`),
          { action: "run", confirm: "director.confirm_run", params: { label: d.label } }));
      }
      if (d.state === "drawn") {
        row.appendChild(button("director.reveal", () => api("POST", `/api/director/draws/${L}/reveal`),
          { action: "reveal", cls: "danger", confirm: "director.confirm_reveal", params: { label: d.label } }));
      }
      if (d.state === "revealed") {  // the verification bundle exists only once the secret is revealed
        const a = el("a", "button", t("director.bundle")); a.href = `/api/director/draws/${L}/bundle`; a.download = d.label + ".json";
        row.appendChild(a);
      }
      box.appendChild(row);
      if (d.drawn && d.drawn.length) {
        box.appendChild(el("h4", "", t("director.drawn")));
        box.appendChild(boardsTable(d.label, d.drawn, d.state === "revealed"));
        box.appendChild(exportSection(d.label, d.state === "revealed"));
      }
      draws.appendChild(box);
    }
  }
  document.getElementById("seal").addEventListener("click", async () => {
    if (!confirm(t("director.confirm_seal"))) return;
    try { await api("POST", "/api/director/seal"); said("director.done"); } catch (e) { say(e.message, true); }
    refresh();
  });
  document.getElementById("prepare").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const f = new FormData(ev.target);
    if (!confirm(t("director.confirm_prepare", { label: f.get("label") }))) return;
    const body = { label: f.get("label"), replacement: f.get("replacement") === "on" };
    if (String(f.get("override") || "").trim()) body.override = f.get("override");
    if (String(f.get("witnesses")).trim()) { body.witnesses = f.get("witnesses"); body.rolls = Number(f.get("rolls")); body.faces = Number(f.get("faces")); }
    else { body.named = f.get("named"); body.numbers = Number(f.get("numbers")); body.min = 1; body.max = Number(f.get("max")); }
    try { await api("POST", "/api/director/draws", body); said("director.done"); }
    catch (e) { say(e.message, true); }
    refresh();
  });
  I18N.onChange(refresh);
  refresh();
  setInterval(refresh, 5000);
})();
