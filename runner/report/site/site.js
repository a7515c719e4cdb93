// flux-conformance results site: the filters.  No network, no library; works from file://.
// Each <form class="filters" data-for="TABLE"> narrows the rows of that table: "spec", "op"
// and "level" keep the rows whose data- attribute equals the choice, "impl" shows one
// implementation's column only, "outcome" keeps the rows where a shown cell has that outcome.
// The choice is kept in the address after "#", so a filtered view can be linked.
(function () {
  "use strict";
  const fromHash = new URLSearchParams(location.hash.slice(1));
  document.querySelectorAll("form.filters").forEach(function (form) {
    const table = document.getElementById(form.dataset.for);
    if (!table) return;
    const selects = Array.from(form.querySelectorAll("select"));
    const rows = Array.from(table.querySelectorAll("tbody tr:not(.rule-row)"));
    const output = form.querySelector("output");
    selects.forEach(function (s) {
      const wanted = fromHash.get(s.name);
      if (wanted !== null && Array.from(s.options).some(function (o) { return o.value === wanted; })) {
        s.value = wanted;
      }
    });
    function apply() {
      const want = {};
      selects.forEach(function (s) { if (s.value) want[s.name] = s.value; });
      table.querySelectorAll("[data-impl]").forEach(function (c) {
        c.hidden = Boolean(want.impl) && c.dataset.impl !== want.impl;
      });
      let shown = 0;
      rows.forEach(function (row) {
        let keep = ["spec", "op", "level"].every(function (k) {
          return !want[k] || row.dataset[k] === want[k];
        });
        if (keep && want.outcome) {
          keep = Array.from(row.querySelectorAll("[data-outcomes]")).some(function (c) {
            return !c.hidden && c.dataset.outcomes.split(" ").indexOf(want.outcome) >= 0;
          });
        }
        row.hidden = !keep;
        if (keep) shown += 1;
      });
      // A group's heading row stays only while a row of its group is shown.
      table.querySelectorAll("tr.rule-row").forEach(function (head) {
        const group = Array.from(head.parentNode.rows).filter(function (r) { return r !== head; });
        head.hidden = !group.some(function (r) { return !r.hidden; });
      });
      if (output) output.textContent = shown + " of " + rows.length + " rows shown";
      const state = new URLSearchParams(want).toString();
      try {
        history.replaceState(null, "", state ? "#" + state : location.pathname + location.search);
      } catch (err) {
        // Some browsers refuse to change the address of a file:// page; the filter still works.
      }
    }
    selects.forEach(function (s) { s.addEventListener("change", apply); });
    apply();
  });
})();
