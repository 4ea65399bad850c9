// The quote form shows the owned-hardware fields only for an owned quote (data-term on the
// fieldset names the pricing term it applies to). Without this script every field shows, and
// the server says which apply. A fieldset with an error always shows, so no error is hidden.
(function () {
  "use strict";
  function update(form, select) {
    form.querySelectorAll("fieldset[data-term]").forEach(function (set) {
      var wanted = select.value === set.dataset.term;
      set.hidden = !wanted && !set.querySelector(".has-error");
    });
  }
  function start() {
    var form = document.getElementById("quote-form");
    var select = document.getElementById("id_pricing_term");
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
