// The brief form shows only the fields of the chosen workload type. Each field's wrapper
// names the types it applies to (data-workloads; empty: every type). Without this script
// every field shows, grouped, and the server empties the ones the type has no use for.
// A field with an error always shows, so that no error is hidden. The model presets list
// only those of the chosen type (data-workloads on each option), the tooling list likewise.
(function () {
  "use strict";
  function update(form, select) {
    var chosen = select.value;
    form.querySelectorAll("[data-workloads]").forEach(function (el) {
      var types = el.dataset.workloads ? el.dataset.workloads.split(" ") : [];
      var wanted = !chosen || types.length === 0 || types.indexOf(chosen) !== -1;
      if (el.tagName === "INPUT") {
        // A tooling checkbox: its choice (the label and its wrapper) goes with it, and a
        // hidden tool is not sent.
        var label = el.closest("label");
        (label ? label.parentNode : el).hidden = !wanted;
        if (!wanted) { el.checked = false; }
        return;
      }
      el.hidden = !wanted && !el.querySelector(".has-error");
      // "needed for a ranking" only beside the fields the chosen type's ranking needs.
      var mark = el.querySelector(".needed-mark");
      if (mark) {
        var needed = el.dataset.needed ? el.dataset.needed.split(" ") : [];
        mark.hidden = !chosen || needed.indexOf(chosen) === -1;
      }
    });
    // The model presets of the chosen type only (an image brief takes a diffusion model).
    var preset = document.getElementById("id_model_preset");
    if (preset) {
      preset.querySelectorAll("option[data-workloads]").forEach(function (option) {
        var serves = option.dataset.workloads.split(" ");
        var offered = !chosen || serves.indexOf(chosen) !== -1;
        option.hidden = !offered;
        option.disabled = !offered;
      });
      var picked = preset.options[preset.selectedIndex];
      if (picked && picked.disabled) { preset.value = ""; }
    }
    form.querySelectorAll("fieldset[data-group]").forEach(function (set) {
      var shown = set.querySelectorAll("[data-workloads]:not([hidden])").length;
      set.hidden = shown === 0;
    });
  }
  function start() {
    var form = document.getElementById("brief-form");
    var select = document.getElementById("id_workload_type");
    if (!form || !select) { return; }
    select.addEventListener("change", function () { update(form, select); });
    update(form, select);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
