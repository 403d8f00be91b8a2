// Message catalogues: every visible string comes from dealer/web/i18n/<lang>.json (embedded in the page).
"use strict";
const I18N = (() => {
  const catalogues = JSON.parse(document.getElementById("catalogues").textContent);
  let lang = document.documentElement.dataset.lang || "en";
  const listeners = [];
  function t(key, params) {
    const cat = catalogues[lang] || catalogues.en;
    let text = key in cat ? cat[key] : catalogues.en[key];
    if (text === undefined) return key;
    if (text && typeof text === "object" && !Array.isArray(text) && "other" in text) {
      // plural forms by CLDR category (Intl.PluralRules): ru 1 сдача, 2 сдачи, 5 сдач
      const n = Number((params || {}).n);
      text = text[new Intl.PluralRules(lang).select(n)] || text.other;
    }
    if (typeof text !== "string") return text;
    for (const [name, value] of Object.entries(params || {})) text = text.split("{" + name + "}").join(String(value));
    return text;
  }
  function apply(root) {
    for (const el of (root || document).querySelectorAll("[data-i18n]")) {
      const params = {};
      for (const [k, v] of Object.entries(el.dataset)) {
        if (k.startsWith("i18n") && k.length > 4) params[k.slice(4).toLowerCase()] = v;
      }
      el.textContent = t(el.dataset.i18n, params);
    }
  }
  function set(next) {
    if (!(next in catalogues)) return;
    lang = next;
    document.documentElement.lang = next;
    document.documentElement.dataset.lang = next;
    document.cookie = "dealer_lang=" + next + "; path=/; SameSite=Strict; max-age=31536000";
    apply(document);
    for (const fn of listeners) fn(next);
  }
  document.addEventListener("DOMContentLoaded", () => {
    for (const b of document.querySelectorAll(".langswitch")) b.addEventListener("click", () => set(lang === "ru" ? "en" : "ru"));
  });
  // a time of day in the page's language (24-hour in Russian)
  function time(ms) {
    return new Intl.DateTimeFormat(lang === "ru" ? "ru-RU" : "en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit" })
      .format(new Date(ms));
  }
  return { t, time, apply, set, get lang() { return lang; }, onChange: (fn) => listeners.push(fn) };
})();
