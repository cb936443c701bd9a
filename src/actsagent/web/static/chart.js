/* A tiny SVG chart: horizontal bars for categories, a line for a series. No dependencies. */
(function (global) {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#4f46e5", "#0ea5e9", "#f59e0b"];

  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function niceTicks(lo, hi, count) {
    if (lo === hi) { hi = lo + 1; }
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / count)));
    var err = (count * step) / span;
    if (err <= 0.15) step *= 10; else if (err <= 0.35) step *= 5; else if (err <= 0.75) step *= 2;
    var start = Math.floor(lo / step) * step, ticks = [];
    for (var v = start; v < hi + step * 0.999; v += step) ticks.push(Math.round(v / step) * step);
    return ticks;
  }

  function fmt(v) {
    if (typeof v !== "number") return String(v);
    var a = Math.abs(v);
    if (a >= 1e9) return (v / 1e9).toFixed(1).replace(/\.0$/, "") + "B";
    if (a >= 1e6) return (v / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
    if (a >= 1e4) return (v / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
    return Number.isInteger(v) ? v.toLocaleString() : v.toLocaleString(undefined, { maximumFractionDigits: 2 });
  }

  function clip(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  function series(spec, view) {
    return spec.y.map(function (yi) {
      return view.rows.map(function (r) { return typeof r[yi] === "number" ? r[yi] : null; });
    });
  }

  function legend(svg, spec, view, x, y) {
    if (spec.y.length < 2) return;
    spec.y.forEach(function (yi, i) {
      svg.appendChild(el("rect", { x: x + i * 140, y: y - 9, width: 10, height: 10, rx: 2, fill: COLORS[i] }));
      svg.appendChild(el("text", { x: x + i * 140 + 14, y: y, "class": "ch-legend" }, clip(view.columns[yi], 18)));
    });
  }

  function bars(spec, view) {
    var rows = view.rows, data = series(spec, view), n = rows.length, k = spec.y.length;
    var W = 640, labelW = 170, valueW = 64, rowH = k > 1 ? 14 * k + 8 : 24, top = k > 1 ? 24 : 8;
    var H = top + n * rowH + 8;
    var all = [].concat.apply([], data).filter(function (v) { return v !== null; });
    var lo = Math.min(0, Math.min.apply(null, all)), hi = Math.max(0, Math.max.apply(null, all));
    var plotW = W - labelW - valueW, scale = function (v) { return labelW + ((v - lo) / ((hi - lo) || 1)) * plotW; };
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, "class": "chart", role: "img" });
    legend(svg, spec, view, labelW, 14);
    svg.appendChild(el("line", { x1: scale(0), x2: scale(0), y1: top - 2, y2: H - 4, "class": "ch-axis" }));
    rows.forEach(function (r, i) {
      var y0 = top + i * rowH;
      svg.appendChild(el("text", { x: labelW - 8, y: y0 + rowH / 2 + 4, "text-anchor": "end", "class": "ch-label" },
        clip(r[spec.x] === null ? "NULL" : r[spec.x], 24)));
      data.forEach(function (vals, s) {
        var v = vals[i]; if (v === null) return;
        var bh = k > 1 ? 12 : 16, by = y0 + (k > 1 ? 4 + s * 14 : (rowH - bh) / 2);
        var x1 = scale(Math.min(0, v)), x2 = scale(Math.max(0, v));
        var rect = el("rect", { x: x1, y: by, width: Math.max(1, x2 - x1), height: bh, rx: 3, fill: COLORS[s], "class": "ch-bar" });
        rect.appendChild(el("title", {}, view.columns[spec.x] + " " + r[spec.x] + ": " + view.columns[spec.y[s]] + " " + v));
        svg.appendChild(rect);
        svg.appendChild(el("text", { x: x2 + 6, y: by + bh / 2 + 4, "class": "ch-value" }, fmt(v)));
      });
    });
    return svg;
  }

  function line(spec, view) {
    var rows = view.rows, data = series(spec, view), n = rows.length;
    var W = 640, H = 260, L = 56, R = 34, T = spec.y.length > 1 ? 28 : 14, B = 44;
    var all = [].concat.apply([], data).filter(function (v) { return v !== null; });
    var ticks = niceTicks(Math.min.apply(null, all), Math.max.apply(null, all), 5);
    var lo = ticks[0], hi = ticks[ticks.length - 1];
    var sx = function (i) { return L + (n === 1 ? 0.5 : i / (n - 1)) * (W - L - R); };
    var sy = function (v) { return T + (1 - (v - lo) / ((hi - lo) || 1)) * (H - T - B); };
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, "class": "chart", role: "img" });
    legend(svg, spec, view, L, 14);
    ticks.forEach(function (t) {
      svg.appendChild(el("line", { x1: L, x2: W - R, y1: sy(t), y2: sy(t), "class": "ch-grid" }));
      svg.appendChild(el("text", { x: L - 6, y: sy(t) + 4, "text-anchor": "end", "class": "ch-tick" }, fmt(t)));
    });
    var every = Math.max(1, Math.ceil(n / 8));
    rows.forEach(function (r, i) {
      var last = i === n - 1;
      if (i % every !== 0 && !last) return;
      if (!last && n - 1 - i < every * 0.6 && i !== 0) return;  // keep the last label clear of its neighbour
      svg.appendChild(el("text", { x: sx(i), y: H - B + 18, "text-anchor": "middle", "class": "ch-tick" },
        clip(String(r[spec.x]).replace(/ 00:00:00$/, ""), 12)));
    });
    data.forEach(function (vals, s) {
      var pts = [];
      vals.forEach(function (v, i) { if (v !== null) pts.push(sx(i).toFixed(1) + "," + sy(v).toFixed(1)); });
      svg.appendChild(el("polyline", { points: pts.join(" "), fill: "none", stroke: COLORS[s], "stroke-width": 2.2,
        "stroke-linejoin": "round", "class": "ch-line" }));
      if (n <= 60) vals.forEach(function (v, i) {
        if (v === null) return;
        var c = el("circle", { cx: sx(i), cy: sy(v), r: 3.2, fill: "#fff", stroke: COLORS[s], "stroke-width": 2 });
        c.appendChild(el("title", {}, rows[i][spec.x] + ": " + v));
        svg.appendChild(c);
      });
    });
    return svg;
  }

  function render(container, spec, view) {
    container.innerHTML = "";
    if (!spec || !view || !view.rows.length) return;
    var head = document.createElement("div");
    head.className = "chart-title";
    head.textContent = spec.title || "";
    container.appendChild(head);
    if (spec.kind !== "line" && view.rows.length > 40) {
      view = { columns: view.columns, rows: view.rows.slice(0, 40) };
      head.textContent += " (first 40 rows)";
    }
    container.appendChild(spec.kind === "line" ? line(spec, view) : bars(spec, view));
  }

  global.MiniChart = { render: render, niceTicks: niceTicks };
})(window);
