/* Draws the history charts (uPlot) from the JSON the server put next to them, and again after
   htmx replaces them or the window is resized; skips a poll of a region that holds the focus
   (a button someone is about to press is not replaced under them). The page's Content Security
   Policy allows no eval, so this is done here rather than in an hx-trigger filter. */
(function () {
  "use strict";
  var plots = [];
  var colours = { succeeded: "#0f6b35", failed: "#a4161a", dead_lettered: "#7a4d00", error_rate: "#a4161a" };

  function utc(ts) { return uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); }

  function options(kind, width) {
    var series = [{ label: "hour (UTC)" }];
    if (kind === "tasks") {
      ["succeeded", "failed", "dead_lettered"].forEach(function (name) {
        series.push({ label: name.replace("_", " "), stroke: colours[name], width: 2, points: { show: false } });
      });
    } else {
      series.push({ label: "error rate %", stroke: colours.error_rate, width: 2, spanGaps: false,
        points: { show: true, size: 7, fill: colours.error_rate } });
    }
    return {
      width: width, height: 200, series: series, legend: { show: true },
      tzDate: utc,
      scales: { y: { range: function (u, min, max) { return [0, Math.max(max || 0, kind === "errors" ? 5 : 1)]; } } },
      axes: [{ stroke: "#4f5862" }, { stroke: "#4f5862" }],
      cursor: { show: true }
    };
  }

  function draw() {
    plots.forEach(function (p) { p.destroy(); });
    plots = [];
    if (typeof uPlot === "undefined") { return; }
    document.querySelectorAll("script.chart-data").forEach(function (script) {
      var series = JSON.parse(script.textContent);
      var section = script.closest("section") || document;
      section.querySelectorAll(".chart[data-chart]").forEach(function (el) {
        el.textContent = "";
        var kind = el.getAttribute("data-chart");
        var data = kind === "tasks"
          ? [series.hour, series.succeeded, series.failed, series.dead_lettered]
          : [series.hour, series.error_rate];
        var width = Math.max(Math.floor(el.clientWidth), 160);
        plots.push(new uPlot(options(kind, width), data, el));
      });
    });
  }

  var pending = null;
  function redrawSoon() {
    if (pending) { clearTimeout(pending); }
    pending = setTimeout(draw, 150);
  }

  document.addEventListener("DOMContentLoaded", draw);
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.target && event.target.querySelector && event.target.querySelector("script.chart-data")) { draw(); }
  });
  window.addEventListener("resize", redrawSoon);
  document.addEventListener("htmx:beforeRequest", function (event) {
    var region = event.detail && event.detail.elt;
    if (region && region.hasAttribute && region.hasAttribute("data-poll-unless-focused") &&
        region.contains(document.activeElement)) {
      event.preventDefault();
    }
  });
})();
