// Collapsed sections (details.section, static/css/site.css) open by themselves when a link or
// an error points inside them: the address's #fragment on load and on every hash change, and
// the first field with an error. Without this script a collapsed section opens on a click.
(function () {
  "use strict";
  function openAround(el) {
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
  }
  function openTarget() {
    if (!location.hash) { return; }
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target) { openAround(target); target.scrollIntoView(); }
  }
  function start() {
    document.querySelectorAll("details .has-error, details .error").forEach(openAround);
    openTarget();
    window.addEventListener("hashchange", openTarget);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
