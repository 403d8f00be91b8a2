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
    for (const [name, value] of Object.entries(params || {})) text = text.split("{" + name + "}").join(shown(value));
    return text;
  }
  // a fraction in the page's language (ru 6,25; en 6.25); whole numbers as they are (board and deal numbers are
  // names, not quantities to group)
  function number(value, digits) {
    const locale = lang === "ru" ? "ru-RU" : "en-US";
    return new Intl.NumberFormat(locale, { maximumFractionDigits: digits === undefined ? 2 : digits, useGrouping: false })
      .format(value);
  }
  function shown(value) {
    return typeof value === "number" && !Number.isInteger(value) ? number(value) : String(value);
  }
  function apply(root) {
    for (const el of (root || document).querySelectorAll("[data-i18n]")) {
      const params = {};
      for (const [k, v] of Object.entries(el.dataset)) {
        // a fraction in the attribute ("2.5") is a number: shown in the page's language («2,5»)
        if (k.startsWith("i18n") && k.length > 4) params[k.slice(4).toLowerCase()] = /^-?\d+\.\d+$/.test(v) ? Number(v) : v;
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
  // The committed format of the public value V in words, from its spec (dealer/draw/protocol.py
  // PublicValueSpec.format_text says the same in English): shown on the hall banner and the director's page.
  function valueFormat(spec) {
    if (!spec) return "";
    if (spec.kind === "dice") {
      const names = (spec.witnesses || []).join(", ");
      return t("vformat.dice", {
        witnesses: t("vformat.witnesses_n", { n: (spec.witnesses || []).length }),
        names,
        rolls: t("vformat.rolls_n", { n: spec.rolls, faces: spec.faces }),
        symbols: spec.faces === 6 ? "1-6" : "0-9",
      });
    }
    return t(spec.distinct ? "vformat.named_distinct" : "vformat.named", {
      numbers: t(spec.distinct ? "vformat.distinct_numbers_n" : "vformat.numbers_n", { n: spec.count }),
      min: spec.min, max: spec.max,
      digits: t("vformat.digits_n", { n: spec.width }),
      order: t(spec.order === "ascending" ? "vformat.ascending" : "vformat.as_drawn"),
      separator: spec.separator,
    });
  }
  // A station's heading: the word (Стол / Station) and its name, but the name alone when it already starts with
  // the word in either language («Стол 1», not «Стол Стол 1»)
  function named(key, name) {
    const text = String(name);
    const lower = text.toLocaleLowerCase();
    for (const cat of Object.values(catalogues)) {
      const word = typeof cat[key] === "string" ? cat[key].toLocaleLowerCase() : "";
      if (word && lower.startsWith(word) && (lower.length === word.length || !/\p{L}/u.test(lower[word.length]))) return text;
    }
    return t(key) + " " + text;
  }
  return { t, time, number, apply, set, valueFormat, named, get lang() { return lang; }, onChange: (fn) => listeners.push(fn) };
})();
