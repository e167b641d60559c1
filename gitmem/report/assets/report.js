/* gitmem report: draws the charts the page describes in its JSON (#gitmem-report-data) with uPlot.
   Everything is in the page: no request leaves it. Each drawn chart is listed in window.gitmemCharts. */
(function () {
  "use strict";
  var source = document.getElementById("gitmem-report-data");
  var report = JSON.parse(source.textContent);
  var drawn = [];
  window.gitmemCharts = drawn;
  var HEIGHT = 230;
  var BAND = "rgba(90, 0, 0, 0.28)";
  var EDGE = "rgba(127, 0, 0, 0.9)";

  function formatter(tz, pattern) {
    var format = uPlot.fmtDate(pattern);
    return function (seconds) { return format(uPlot.tzDate(new Date(seconds * 1000), tz)); };
  }

  function number(value) {
    if (value == null) { return "–"; }
    return Math.abs(value) >= 1000 ? Math.round(value).toLocaleString("en") : String(value);
  }

  function xSeries(ws, chart) {
    var day = formatter(ws.timezone, "{YYYY}-{MM}-{DD}");
    var minute = formatter(ws.timezone, "{YYYY}-{MM}-{DD} {HH}:{mm}");
    var labels = chart.x === "cycles" ? ws.axes.cycle_numbers : chart.x === "decisions" ? ws.axes.decision_ids : null;
    return {
      label: chart.x === "days" ? "day" : chart.x === "cycles" ? "cycle" : "decision",
      value: function (u, value, si, index) {
        if (index == null) { return "–"; }
        if (chart.x === "days") { return day(value); }
        var name = chart.x === "cycles" ? "cycle " + labels[index] : labels[index] + " asked";
        return name + " · " + minute(value);
      }
    };
  }

  /* A days axis ticks whole days only, every 1, 2, 3, 7, 14... days so the labels never crowd: uPlot's own
     ticks would split a one-day window into hours, under bars that each stand for a whole day. */
  var DAY_STEPS = [1, 2, 3, 7, 14, 28, 56, 91, 182, 364];
  var LABEL_ROOM = 64;   // CSS pixels per tick label

  function xAxis(ws, chart) {
    if (chart.x !== "days") { return {}; }
    var label = formatter(ws.timezone, "{MMM} {D}");
    var days = ws.axes.days;
    return {
      splits: function (u, axis, min, max) {
        var shown = days.filter(function (d) { return d >= min && d <= max; });
        var room = Math.max(1, Math.floor((u.width - 100) / LABEL_ROOM));
        var need = Math.ceil(shown.length / room);
        var step = DAY_STEPS.filter(function (s) { return s >= need; })[0] || need;
        return shown.filter(function (d, i) { return i % step === 0; });
      },
      values: function (u, splits) { return splits.map(label); }
    };
  }

  /* A chart of counts (cycles, lessons, rules) ticks whole numbers only: uPlot's own steps would label a
     one-cycle day 0, 0.2, 0.4 ... 1. */
  var WHOLE_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000];

  function yAxis(chart) {
    var axis = { scale: "y", label: chart.axes.y || "", size: 64 };
    if (chart.whole) {
      axis.incrs = WHOLE_STEPS;
      axis.values = function (u, splits) { return splits.map(function (v) { return String(Math.round(v)); }); };
    }
    return axis;
  }

  function seriesOptions(spec, raw) {
    var base = { label: spec.label, stroke: spec.colour, scale: spec.scale, width: 1.5,
                 value: function (u, value, si, index) { return index == null ? "–" : number(raw[index]); } };
    if (spec.style === "bar") {
      base.fill = spec.colour;
      base.width = 0;
      base.paths = uPlot.paths.bars({ size: [0.8, 28, 1] });
      base.points = { show: false };
    } else if (spec.style === "step") {
      base.width = spec.width || 2;
      base.paths = uPlot.paths.stepped({ align: 1 });
      base.points = { show: false };
    } else if (spec.style === "points") {
      base.paths = function () { return null; };
      base.points = { show: true, size: 7, width: 1, stroke: spec.colour, fill: spec.colour };
    } else if (spec.style === "dash") {
      base.dash = [6, 4];
      base.points = { show: false };
    } else {
      base.points = { show: false };
    }
    return base;
  }

  /* Stacked bars are drawn as running totals, the tallest first, so each bar shows above the one below it;
     the legend still shows each series' own count. */
  function arrange(chart, length) {
    var stacked = chart.series.filter(function (s) { return s.stack; });
    var rest = chart.series.filter(function (s) { return !s.stack; });
    var totals = [];
    var running = new Array(length).fill(0);
    stacked.forEach(function (spec) {
      running = running.map(function (sum, i) { return sum + (spec.values[i] || 0); });
      totals.push({ spec: spec, values: running.slice() });
    });
    totals.reverse();
    return totals.concat(rest.map(function (spec) { return { spec: spec, values: spec.plot || spec.values }; }));
  }

  function fromZero(u, min, max) { return [0, max > 0 ? max * 1.2 : 1]; }

  function bandsHook(bands) {
    return function (u) {
      if (!bands.length) { return; }
      var ctx = u.ctx;
      ctx.save();
      ctx.fillStyle = BAND;
      bands.forEach(function (band) {
        var left = u.valToPos(band[0], "x", true);
        var right = u.valToPos(band[1], "x", true);
        var width = Math.max(right - left, 3 * (window.devicePixelRatio || 1));
        ctx.fillRect(left, u.bbox.top, width, u.bbox.height);
        ctx.fillStyle = EDGE;
        ctx.fillRect(left, u.bbox.top, width, 3 * (window.devicePixelRatio || 1));
        ctx.fillStyle = BAND;
      });
      ctx.restore();
    };
  }

  function draw(ws, index, chart, element) {
    var x = ws.axes[chart.x];
    var ordered = arrange(chart, x.length);
    var scales = { x: { time: true }, y: { range: fromZero } };
    if (chart.x === "days") {   // half a day either side: whole bars at the ends, and a sane axis for one day
      scales.x.range = function (u, min, max) { return [min - 43200, max + 43200]; };
    } else {
      // One point (or several at one moment) leaves uPlot no span, and it stretches the axis over years
      // before it asks this function (so its min and max differ): judge by the data, and give such a chart
      // the day around its moment instead.
      scales.x.range = function (u, min, max) {
        var xs = u.data[0].filter(function (v) { return v != null; });
        var lo = Math.min.apply(null, xs), hi = Math.max.apply(null, xs);
        return xs.length && lo === hi ? [lo - 43200, hi + 43200] : [min, max];
      };
    }
    var axes = [xAxis(ws, chart), yAxis(chart)];
    if (chart.axes.y2) {
      scales.y2 = { range: fromZero };
      axes.push({ scale: "y2", label: chart.axes.y2, side: 1, size: 64, grid: { show: false } });
    }
    var options = {
      width: Math.max(320, element.clientWidth),
      height: HEIGHT,
      padding: [10, chart.axes.y2 ? 0 : 24, 0, 0],
      tzDate: function (seconds) { return uPlot.tzDate(new Date(seconds * 1000), ws.timezone); },
      scales: scales,
      axes: axes,
      cursor: { sync: { key: "ws" + index + "-" + chart.x } },
      legend: { live: true },
      series: [xSeries(ws, chart)].concat(ordered.map(function (item) {
        return seriesOptions(item.spec, item.spec.values);
      })),
      hooks: { draw: [bandsHook(chart.bands)] }
    };
    var plot = new uPlot(options, [x].concat(ordered.map(function (item) { return item.values; })), element);
    drawn.push({ workspace: ws.name, key: chart.key, plot: plot, element: element });
  }

  report.workspaces.forEach(function (ws, index) {
    ws.charts.forEach(function (chart) {
      var element = document.getElementById("chart-" + index + "-" + chart.key);
      if (!element) { return; }
      try {
        draw(ws, index, chart, element);
      } catch (error) {
        element.textContent = "This chart could not be drawn: " + error;
        console.error("gitmem report: chart " + chart.key + ": " + error);
      }
    });
  });

  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      drawn.forEach(function (item) {
        item.plot.setSize({ width: Math.max(320, item.element.clientWidth), height: HEIGHT });
      });
    }, 100);
  });
}());
