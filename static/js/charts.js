// Draw every chart on the page: <div class="chart" data-figure="ID"> takes its figure
// (a Plotly {data, layout} dict) from the json_script block with that ID. No inline code.
(function () {
  "use strict";
  // Plotly's own default height, for a figure that sets none.
  var DEFAULT_HEIGHT_PX = 450;
  function draw() {
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source || !window.Plotly) { return; }
      var figure = JSON.parse(source.textContent);
      if (!figure) { return; }
      var layout = figure.layout || {};
      // The box is as tall as its figure: responsive charts refit their box on every resize,
      // and a box left to the stylesheet's min-height would squash the figure (legend cut)
      // and let it spill over the next chart. Set through the CSSOM, which the CSP allows.
      layout.height = layout.height || DEFAULT_HEIGHT_PX;
      el.style.height = layout.height + "px";
      window.Plotly.newPlot(el, figure.data, layout, { responsive: true, displaylogo: false, displayModeBar: false });
    });
  }
  // A chart drawn inside a closed section (details.section) was laid out at Plotly's default
  // width; it refits the section's width when the section opens ("toggle" does not bubble, so
  // it is caught on the way down).
  document.addEventListener("toggle", function (event) {
    var section = event.target;
    if (!section.open || !window.Plotly || !section.querySelectorAll) { return; }
    section.querySelectorAll("[data-figure]").forEach(function (el) {
      if (el.data) { window.Plotly.Plots.resize(el); }
    });
  }, true);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
