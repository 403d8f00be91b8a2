// Documents from the consoles: the judge records equipment checks and issues the equipment act; the chief
// judge issues the bank act, draw protocol, sealed annex, board-making act and the day's record (PDF).
"use strict";
(() => {
  const t = I18N.t;
  const root = document.getElementById("documents");
  if (!root) return;
  const role = root.dataset.role;
  const out = document.getElementById("doc-result");
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
  function field(name) { const f = root.querySelector("[name=" + name + "]"); return f ? f.value.trim() : ""; }
  // the answer line: a catalogue text keeps its key (a language switch re-translates it); the server's own (a
  // refusal, an issued document's title) is said in the language it came in
  function say(text, error, key) {
    if (key) out.dataset.i18n = key; else delete out.dataset.i18n;
    out.textContent = key ? t(key) : text;
    out.classList.toggle("error", !!error);
  }
  function show(doc) {
    say("");
    out.replaceChildren();
    const a = document.createElement("a");
    a.href = doc.url; a.target = "_blank"; a.rel = "noopener";
    a.textContent = t("docs.issued", { n: doc.number, title: doc.title });
    const code = document.createElement("code");
    code.textContent = "SHA-256 " + doc.sha256;
    out.append(a, document.createElement("br"), code);
  }
  function fail(e) { say(t("director.error") + ": " + e.message, true); }
  async function issue(path, body) {
    say("", false, "docs.issuing");
    try { show(await api("POST", path, { lang: I18N.lang, witnesses: field("witnesses"), ...body })); } catch (e) { fail(e); }
  }
  // the session, witnesses and station typed survive a reload (this browser's own storage): the list of checks
  // follows the session, so a reload that put back the default session made the recorded checks vanish
  const kept = "dealer.documents." + role + ".";
  for (const name of ["session", "label", "witnesses", "station"]) {
    const f = root.querySelector("[name=" + name + "]");
    if (!f) continue;
    const saved = localStorage.getItem(kept + name);
    if (saved !== null && (f.tagName !== "SELECT" || [...f.options].some((o) => o.value === saved))) f.value = saved;
    f.addEventListener("change", () => localStorage.setItem(kept + name, f.value));
  }
  async function listChecks() {
    const list = document.getElementById("checks");
    const session = field("session") || field("label");
    if (!list || !session) return;
    try {
      const checks = await api("GET", "/api/" + role + "/checks?session=" + encodeURIComponent(session));
      list.replaceChildren(...checks.map((c) => {
        const li = document.createElement("li");
        const device = c.device ? [c.device.model, c.device.serial, c.device.firmware].filter(Boolean).join(" · ") : "—";
        li.textContent = [t("docs.phase." + c.phase), c.station, device,
          t("docs.rate", { rate: c.error_rate, norm: c.norm }), t("docs.outcome." + c.outcome), c.note].filter(Boolean).join(" — ");
        return li;
      }));
    } catch (e) { fail(e); }
  }
  for (const b of root.querySelectorAll("button[data-doc]")) {
    b.addEventListener("click", () => {
      const kind = b.dataset.doc;
      if (role === "judge") return issue("/api/judge/documents/equipment", { session: field("session") });
      const body = kind === "day" ? { date: field("date") } : kind === "bank" ? {} : { label: field("label") };
      return issue("/api/director/documents/" + kind, body);
    });
  }
  const record = document.getElementById("record-check");
  if (record) {
    record.addEventListener("click", async () => {
      try {
        await api("POST", "/api/judge/checks", { station: field("station"), session: field("session"),
          phase: field("phase"), outcome: field("outcome"), note: field("note") });
        say("", false, "docs.check_recorded");
        listChecks();
      } catch (e) { fail(e); }
    });
    root.querySelector("[name=session]").addEventListener("change", listChecks);
  }
  const sessionField = root.querySelector("[name=label]");
  if (role === "director" && sessionField) sessionField.addEventListener("change", listChecks);
  listChecks();
  I18N.onChange(listChecks);  // the checks' phases, outcomes and rates in the new language
  const date = root.querySelector("[name=date]");
  if (date && !date.value) date.value = new Date().toISOString().slice(0, 10);
})();
