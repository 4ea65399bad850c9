// Draw every chart on the page: <div class="chart" data-figure="ID"> takes its figure
// (a Plotly {data, layout} dict) from the json_script block with that ID. No inline code.
(function () {
  "use strict";
  function draw() {
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var source = document.getElementById(el.dataset.figure);
      if (!source || !window.Plotly) { return; }
      var figure = JSON.parse(source.textContent);
      if (!figure) { return; }
      window.Plotly.newPlot(el, figure.data, figure.layout, { responsive: true, displaylogo: false, displayModeBar: false });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
