// The what-if calculator (briefs/whatif.html). As the inputs change (debounced), it posts them
// to POST /api/v1/estimate and draws, from the answers:
//   - the fit table: every GPU at the count the engine picks, sorted by what decides;
//   - throughput per GPU against tokens/s per user, one line per leading GPU, one point per
//     concurrency of a sweep (one estimate call per concurrency, without the latency target);
//   - the longest context per GPU count (one estimate call per count, at the concurrency asked).
// "Save as brief" posts the same inputs to POST /api/v1/briefs/ and opens the new brief; the
// API's field errors are shown beside the fields. No inline code or styles: the CSP forbids them.
(function () {
  "use strict";

  // Okabe & Ito's colour-blind safe palette, as the brief and finance charts use it.
  var COLOURS = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9"];
  // A marker shape per line too, so that lines of the same colour vision still part.
  var SYMBOLS = ["circle", "square", "diamond", "triangle-up", "cross", "x"];
  var TARGET_COLOUR = "#111111";
  var MARKER_PX = 6;
  var YOURS_MARKER_PX = 13;
  var CHART_HEIGHT_PX = 400;
  var CACHE_LIMIT = 300;
  var IN_FLIGHT = 1;

  var setup, form, els = {};
  var generation = 0;
  var controller = null;
  var timer = null;
  var cache = new Map();

  // ---- numbers and words -------------------------------------------------------------------

  // A figure to read (apps.briefs.display.number): 3 significant figures below 1,000, whole
  // numbers with thousands separators above; "—" when there is none.
  function number(value, digits) {
    digits = digits || 3;
    if (value === null || value === undefined || typeof value === "boolean") { return "—"; }
    var x = Number(value);
    if (!isFinite(x)) { return "—"; }
    if (x === 0) { return "0"; }
    if (Math.abs(x) >= Math.pow(10, digits)) { return Math.round(x).toLocaleString("en-US"); }
    var decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(x))));
    var text = x.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
    return text.indexOf(".") === -1 ? text : text.replace(/0+$/, "").replace(/\.$/, "");
  }

  function gpus(n) { return number(n) + (n === 1 ? " GPU" : " GPUs"); }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { node.textContent = attrs[k]; } else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (child) {
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    });
    return node;
  }

  // ---- the inputs --------------------------------------------------------------------------

  function integer(input, field, label, max, errors) {
    var raw = input.value.trim();
    if (raw === "") { errors[field] = label + " is required."; return null; }
    var n = Number(raw);
    if (!Number.isInteger(n) || n < 1) { errors[field] = label + " must be a whole number of at least 1."; return null; }
    if (n > max) { errors[field] = label + " must be at most " + number(max) + "."; return null; }
    return n;
  }

  function milliseconds(input, field, label, errors) {
    var raw = input.value.trim();
    if (raw === "") { return null; }
    var n = Number(raw);
    if (!isFinite(n) || n <= 0) { errors[field] = label + " must be a positive number of milliseconds."; return null; }
    if (n > setup.limits.latency_ms) { errors[field] = label + " must be at most " + number(setup.limits.latency_ms) + " ms."; return null; }
    return n;
  }

  function usingConfig() { return els.sourceConfig.checked; }

  // The estimate body for the inputs, or the field errors that keep it from being asked.
  function read() {
    var errors = {};
    var body = { workload_type: els.workload.value, kv_cache_precision: els.kv.value };
    if (usingConfig()) {
      var text = els.config.value.trim();
      if (!text) {
        errors["model.hf_config"] = "Paste the model's config.json.";
      } else {
        try {
          var parsed = JSON.parse(text);
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
            errors["model.hf_config"] = "Paste the whole config.json object ({...}).";
          } else {
            body.model = { hf_config: parsed };
          }
        } catch (exc) {
          errors["model.hf_config"] = "Not valid JSON: " + exc.message;
        }
      }
    } else {
      body.model = { preset: els.preset.value };
    }
    if (els.weight.value) { body.weight_precision = els.weight.value; }
    var tokensMax = setup.limits.tokens;
    var input = integer(els.inputTokens, "input_tokens", "Prompt tokens", tokensMax, errors);
    var output = integer(els.outputTokens, "output_tokens", "Output tokens", tokensMax, errors);
    var conc = integer(els.concurrency, "concurrency", "Concurrent requests", setup.limits.concurrency, errors);
    if (input !== null) { body.input_tokens = { p50: input, p95: input }; }
    if (output !== null) { body.output_tokens = { p50: output, p95: output }; }
    if (conc !== null) { body.concurrency = conc; }
    var window_ = usingConfig() ? null : setup.windows[els.preset.value];
    if (window_ && input !== null && output !== null && input + output > window_) {
      errors.input_tokens = "Prompt plus output (" + number(input + output) + " tokens) exceeds the model's context window of " + number(window_) + " tokens.";
    }
    var ttft = milliseconds(els.ttft, "latency_target.ttft_p95_ms", "Time to first token", errors);
    var itl = milliseconds(els.itl, "latency_target.itl_p95_ms", "Inter-token latency", errors);
    var target = {};
    if (ttft !== null) { target.ttft_p95_ms = ttft; }
    if (itl !== null) { target.itl_p95_ms = itl; }
    if (Object.keys(target).length) { body.latency_target = target; }
    return { body: body, errors: errors, itl: itl, window: window_, context: (input || 0) + (output || 0) };
  }

  // ---- field errors ------------------------------------------------------------------------

  function errorSlots() {
    return Array.prototype.slice.call(document.getElementById("whatif").querySelectorAll("[data-error-for]"));
  }

  // The error slot for a field the engine or the brief API names: the longest known prefix
  // ("input_tokens.p95" -> "input_tokens"; "model" -> the model input in use).
  function slotFor(field) {
    if (field === "model") { field = usingConfig() ? "model.hf_config" : "model.preset"; }
    var best = null;
    errorSlots().forEach(function (slot) {
      var key = slot.dataset.errorFor;
      if (field === key || field.indexOf(key + ".") === 0) {
        if (!best || key.length > best.dataset.errorFor.length) { best = slot; }
      }
    });
    return best;
  }

  // Clear the error slots: all of them, or with "save" kept, the inputs' only (an update
  // while a save is on its way must not wipe what the save answers).
  function clearErrors(except) {
    var saveBox = document.getElementById("wi-save");
    errorSlots().forEach(function (slot) {
      if (except === "save" && saveBox.contains(slot)) { return; }
      slot.hidden = true;
      slot.textContent = "";
      var wrapper = slot.closest(".field");
      if (wrapper) { wrapper.classList.remove("has-error"); }
    });
    if (except !== "save" && els.saveErrors) { els.saveErrors.hidden = true; els.saveErrors.textContent = ""; }
  }

  // Show {field: message}; returns the messages no field claims.
  function showErrors(errors) {
    var loose = [];
    Object.keys(errors).forEach(function (field) {
      var slot = slotFor(field);
      if (!slot) { loose.push(errors[field]); return; }
      slot.textContent = slot.textContent ? slot.textContent + " " + errors[field] : errors[field];
      slot.hidden = false;
      var wrapper = slot.closest(".field");
      if (wrapper) { wrapper.classList.add("has-error"); }
    });
    return loose;
  }

  // {"input_tokens": {"p50": ["..."]}} -> {"input_tokens.p50": "..."}
  function flatten(errors, prefix, out) {
    out = out || {};
    if (Array.isArray(errors)) {
      var texts = errors.filter(function (e) { return typeof e === "string"; });
      if (texts.length) { out[prefix || "detail"] = texts.join(" "); }
      errors.forEach(function (e) { if (e && typeof e === "object") { flatten(e, prefix, out); } });
    } else if (errors && typeof errors === "object") {
      Object.keys(errors).forEach(function (k) {
        flatten(errors[k], prefix ? prefix + "." + k : k, out);
      });
    } else if (typeof errors === "string") {
      out[prefix || "detail"] = errors;
    }
    return out;
  }

  // ---- the estimate service ----------------------------------------------------------------

  function csrf() { return form.querySelector("[name=csrfmiddlewaretoken]").value; }

  function post(url, body, signal) {
    return fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "Accept": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify(body),
      signal: signal
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (data) {
        return { status: response.status, data: data };
      });
    });
  }

  function estimate(body, signal) {
    var key = JSON.stringify(body);
    if (cache.has(key)) { return Promise.resolve(cache.get(key)); }
    return post(setup.urls.estimate, body, signal).then(function (answer) {
      if (answer.status === 200) {
        if (cache.size >= CACHE_LIMIT) { cache.delete(cache.keys().next().value); }
        cache.set(key, answer);
      }
      return answer;
    });
  }

  function refusal(answer) {
    if (answer.status === 429) { return "Too many estimates in a minute: wait a moment, then change an input again."; }
    if (answer.status === 403 || answer.status === 401) { return "Your session has ended: sign in again."; }
    return (answer.data && answer.data.detail) || ("The estimate service answered " + answer.status + ".");
  }

  // ---- the fit table -----------------------------------------------------------------------

  function hasTarget(e) { return e.meets_latency_target !== null && e.meets_latency_target !== undefined; }

  // How the GPU is deployed as the candidate table costs it (apps.engine.deployment): the
  // replicas that carry the load, and the engine's figures for one replica at its share.
  function dep(e) { return e.deployment || null; }
  function meets(e) {
    var d = dep(e);
    if (d) { return Boolean(d.meets_brief); }
    return Boolean(e.fits) && e.meets_latency_target !== false;
  }
  function replicas(e) { var d = dep(e); return d ? d.replicas : 1; }
  function perReplica(e) { var d = dep(e); return d ? d.gpus_per_replica : (e.gpu_count || 1); }
  function total(e) { return perReplica(e) * replicas(e); }
  function figure(e, key, raw) { var d = dep(e); return d ? d[key] : raw; }
  function throughput(e) { return figure(e, "output_tokens_per_s", (e.performance || {}).output_tokens_per_s); }
  function perGpu(e) { return (throughput(e) || 0) / (total(e) || 1); }
  function inFlight(e) { var d = dep(e); return d ? d.in_flight_per_replica : null; }
  function layout(e) { var d = dep(e); return (d && d.layout) || e.layout || ""; }

  // Meets the target first, then fewest GPUs, then the most throughput per GPU (as the brief page).
  function sorted(estimates) {
    return estimates.slice().sort(function (a, b) {
      return (meets(b) - meets(a)) || (total(a) - total(b)) || (perGpu(b) - perGpu(a)) ||
        (a.gpu < b.gpu ? -1 : a.gpu > b.gpu ? 1 : 0);
    });
  }

  function name(slug) { return setup.names[slug] || slug; }
  function shortName(slug) { return setup.short_names[slug] || slug; }

  function memoryText(e) {
    var m = e.memory || {};
    var count = e.gpu_count || 1;
    var capacity = e.memory_capacity_gb || (m.capacity_gb ? m.capacity_gb / count : null);
    return number(m.total_gb !== undefined ? m.total_gb / count : null) + " / " + number(capacity);
  }

  function fitCell(e) {
    if (e.fit === "TIGHT") {
      return el("td", { "class": "fit" }, [el("strong", { "class": "fit-tight", text: "tight" })]);
    }
    return el("td", { "class": "fit", text: e.fits ? "yes" : "no" });
  }

  function meetsCell(e) {
    var d = dep(e);
    if (d && d.why_not) { return el("td", { "class": "meets-no", text: "no: " + d.why_not }); }
    if (!hasTarget(e) && !d) { return el("td", { text: e.fits ? "no target set" : "no" }); }
    return el("td", { "class": meets(e) ? "" : "meets-no", text: meets(e) ? "yes" : "no" });
  }

  function renderTable(rows) {
    var body = els.table.querySelector("tbody");
    var fresh = document.createElement("tbody");
    rows.forEach(function (e) {
      var perf = e.performance || {};
      var count = perReplica(e);
      var link = el("a", { href: setup.urls.gpu.replace("{slug}", e.gpu), text: name(e.gpu) });
      var gpuCell = el("td", { "class": "gpu" }, [link]);
      var needed = el("td", { "class": "num configuration", text: gpus(total(e)) + " (" + number(replicas(e)) + " × " + number(count) + ")" });
      var tr = el("tr", { "data-gpu": e.gpu, "data-fit": figure(e, "fit", e.fit) || (e.fits ? "FITS" : "NO"), "data-meets": meets(e) ? "yes" : "no" }, [
        gpuCell,
        fitCell(e),
        meetsCell(e),
        needed,
        el("td", { "class": "layout", text: layout(e) || "—" }),
        el("td", { "class": "num", title: "capacity: " + (e.memory_capacity_source || "datasheet"), text: memoryText(e) }),
        el("td", { "class": "num in-flight", text: number(inFlight(e)) }),
        el("td", { "class": "num ttft", text: number(figure(e, "ttft_p95_ms", perf.ttft_ms)) }),
        el("td", { "class": "num itl", text: number(figure(e, "itl_p95_ms", perf.itl_ms)) }),
        el("td", { "class": "num", text: number(throughput(e)) + " (" + number(perGpu(e)) + ")" }),
        el("td", { "class": "num", text: e.fits ? number(e.max_context_tokens) : "—" })
      ]);
      if (!e.fits) { tr.className = "nofit"; } else if (e.fit === "TIGHT") { tr.className = "tight"; }
      fresh.appendChild(tr);
      // What to change for a tight fit: a line of its own under the row, the table's width.
      if (e.fit === "TIGHT" && e.fit_advice) {
        fresh.appendChild(el("tr", { "class": "tight advice", "data-advice-for": e.gpu }, [
          el("td", { colspan: "11" }, [el("span", { "class": "fit-advice", text: "Tight: " + e.fit_advice })])
        ]));
      }
    });
    body.replaceWith(fresh);
    els.table.dataset.version = String(generation);
  }

  function renderSummary(rows, inputs) {
    var best = rows[0];
    if (best && meets(best)) {
      var perf = best.performance || {};
      els.best.textContent = "Best fit: " + name(best.gpu) + ", " + gpus(total(best)) +
        " (" + number(replicas(best)) + " × " + number(perReplica(best)) + (layout(best) ? ", " + layout(best) : "") +
        "): time to first token " + number(figure(best, "ttft_p95_ms", perf.ttft_ms)) + " ms, inter-token " +
        number(figure(best, "itl_p95_ms", perf.itl_ms)) + " ms at " + number(inFlight(best)) +
        " in flight per replica, " + number(throughput(best)) + " output tokens/s in all; memory per GPU " +
        memoryText(best) + " GB.";
      els.best.className = "card ok";
    } else {
      els.best.textContent = inputs.body.latency_target
        ? "No GPU meets the latency target at any count tried: loosen the target, shorten the requests or choose a lower precision."
        : "The model fits no GPU at any count tried: choose a lower precision or shorter requests.";
      els.best.className = "card warn";
    }
    els.best.hidden = false;
    var notes = {};
    var warnings = {};
    var weights = "";
    rows.forEach(function (e) {
      (e.notes || []).forEach(function (note) {
        notes[note] = true;
        if (note.indexOf("exceeds the model's") !== -1) { warnings[note] = true; }
        if (note.indexOf("weights: ") === 0) { weights = note.slice("weights: ".length); }
      });
    });
    els.weightsNote.textContent = weights ? "Sized " + weights.replace(/^sized /, "") + "." : "";
    var list = Object.keys(warnings);
    els.warnings.replaceChildren.apply(els.warnings, list.map(function (w) { return el("li", { text: w.charAt(0).toUpperCase() + w.slice(1) + "." }); }));
    els.warnings.hidden = list.length === 0;
    var all = Object.keys(notes).sort();
    els.notes.replaceChildren.apply(els.notes, all.map(function (n) { return el("li", { text: n }); }));
  }

  // Log-axis ticks at 1, 2 and 5 times a power of ten within [lo, hi], labelled as numbers to
  // read ("2,000", "0.5"), not in Plotly's SI shorthand.
  function logTicks(lo, hi) {
    var vals = [];
    for (var k = Math.floor(Math.log10(lo)); k <= Math.ceil(Math.log10(hi)); k++) {
      [1, 2, 5].forEach(function (m) {
        var v = m * Math.pow(10, k);
        if (v >= lo && v <= hi) { vals.push(v); }
      });
    }
    return { tickvals: vals, ticktext: vals.map(function (v) { return number(v); }) };
  }

  // A log axis over the values, with room around them (a factor `pad` either side).
  function logAxis(axis, values, pad) {
    var finite = values.filter(function (v) { return v !== null && v > 0 && isFinite(v); });
    if (!finite.length) { return; }
    var lo = Math.min.apply(null, finite) / pad;
    var hi = Math.max.apply(null, finite) * pad;
    var ticks = logTicks(lo, hi);
    axis.type = "log";
    axis.range = [Math.log10(lo), Math.log10(hi)];
    axis.tickvals = ticks.tickvals;
    axis.ticktext = ticks.ticktext;
    delete axis.rangemode;
    delete axis.tickformat;
  }

  // ---- the charts --------------------------------------------------------------------------

  function baseLayout(title, xTitle, yTitle) {
    return {
      height: CHART_HEIGHT_PX,
      title: { text: title, font: { size: 14 }, x: 0.02, xanchor: "left" },
      margin: { t: 40, r: 16, b: 110, l: 70 },
      xaxis: { title: { text: xTitle }, automargin: true, zeroline: false },
      yaxis: { title: { text: yTitle }, automargin: true, zeroline: false, rangemode: "tozero" },
      // Below the plot, never over the lines.
      legend: { orientation: "h", x: 0, xanchor: "left", y: -0.3, yanchor: "top", font: { size: 11 } },
      hovermode: "closest",
      paper_bgcolor: "#fff",
      plot_bgcolor: "#fff"
    };
  }

  function draw(target, data, layout) {
    if (!window.Plotly) { return; }
    target.style.height = layout.height + "px";
    window.Plotly.react(target, data, layout, { responsive: true, displaylogo: false, displayModeBar: false });
    target.dataset.version = String(generation);
  }

  function empty(target, text) {
    var layout = baseLayout("", "", "");
    layout.xaxis.visible = false;
    layout.yaxis.visible = false;
    layout.annotations = [{ text: text, showarrow: false, xref: "paper", yref: "paper", x: 0.5, y: 0.5, font: { size: 13, color: "#5b6576" } }];
    draw(target, [], layout);
  }

  function throughputChart(leading, sweep, answers, inputs) {
    var yours = inputs.body.concurrency;
    var data = [];
    leading.forEach(function (slug, i) {
      var points = [];
      sweep.forEach(function (conc, k) {
        var e = (answers[k] || []).filter(function (x) { return x.gpu === slug; })[0];
        var perf = e && e.performance;
        if (!e || !e.fits || !perf || !perf.itl_ms) { return; }
        points.push({
          x: 1000 / perf.itl_ms,
          y: perf.output_tokens_per_s_per_gpu,
          conc: conc,
          text: number(conc) + " concurrent on " + gpus(e.gpu_count || 1) + (e.layout ? " (" + e.layout + ")" : "")
        });
      });
      // The Pareto front: a point stays on the line unless another is both faster per user
      // and more per GPU (a larger batch that needs more GPUs can be worse on both counts).
      var front = [];
      var off = [];
      var best = -Infinity;
      points.slice().sort(function (a, b) { return b.x - a.x || b.y - a.y; }).forEach(function (p) {
        if (p.y > best) { front.push(p); best = p.y; } else { off.push(p); }
      });
      front.sort(function (a, b) { return a.x - b.x; });
      var colour = COLOURS[i % COLOURS.length];
      var symbol = SYMBOLS[i % SYMBOLS.length];
      var trace = function (list, extra) {
        var t = {
          type: "scatter",
          name: shortName(slug),
          legendgroup: slug,
          x: list.map(function (p) { return p.x; }),
          y: list.map(function (p) { return p.y; }),
          customdata: list.map(function (p) { return p.text; }),
          marker: { color: colour, symbol: symbol, size: list.map(function (p) { return p.conc === yours ? YOURS_MARKER_PX : MARKER_PX; }) },
          hovertemplate: "<b>%{fullData.name}</b><br>%{customdata}<br>%{y:,.0f} tokens/s per GPU<br>%{x:,.1f} tokens/s per user<extra></extra>"
        };
        Object.keys(extra).forEach(function (k) { t[k] = extra[k]; });
        return t;
      };
      data.push(trace(front, { mode: "lines+markers", line: { color: colour, width: 2 } }));
      if (off.length) {
        var faded = trace(off, { mode: "markers", showlegend: false, opacity: 0.45 });
        faded.marker.symbol = symbol + "-open";
        faded.hovertemplate = faded.hovertemplate.replace("<extra></extra>", "<br>(off the front: another point is better on both)<extra></extra>");
        data.push(faded);
      }
    });
    var layout = baseLayout("Throughput per GPU against speed per user", "Output tokens/s per user (1000 / inter-token ms; log scale)", "Output tokens/s per GPU");
    layout.yaxis.tickformat = ",.0f";
    var xs = [];
    data.forEach(function (t) { xs = xs.concat(t.x); });
    var x = inputs.itl ? 1000 / inputs.itl : null;
    logAxis(layout.xaxis, x ? xs.concat([x]) : xs, 1.25);
    if (x) {
      layout.shapes = [{ type: "line", xref: "x", yref: "paper", x0: x, x1: x, y0: 0, y1: 1, line: { color: TARGET_COLOUR, width: 1.5, dash: "dash" } }];
      // Plotly places annotations on a log axis by the log of the value (shapes by the value).
      layout.annotations = [{ x: Math.log10(x), xref: "x", y: 1, yref: "paper", xanchor: "left", yanchor: "top", showarrow: false,
        text: " inter-token target " + number(inputs.itl) + " ms", font: { size: 11, color: TARGET_COLOUR } }];
    }
    if (!data.some(function (t) { return t.x.length; })) { empty(els.throughput, "No GPU holds these requests at any concurrency tried."); return; }
    draw(els.throughput, data, layout);
  }

  function contextChart(leading, counts, answers, inputs) {
    var labels = counts.map(gpus);
    var data = leading.map(function (slug, i) {
      var ys = counts.map(function (n, k) {
        var e = (answers[k] || []).filter(function (x) { return x.gpu === slug; })[0];
        return e && e.fits && e.max_context_tokens ? e.max_context_tokens : null;
      });
      return {
        type: "scatter",
        mode: "lines+markers",
        name: shortName(slug),
        x: labels,
        y: ys,
        connectgaps: false,
        marker: { color: COLOURS[i % COLOURS.length], symbol: SYMBOLS[i % SYMBOLS.length], size: 8 },
        line: { color: COLOURS[i % COLOURS.length], width: 2 },
        hovertemplate: "<b>%{fullData.name}</b> on %{x}<br>%{y:,.0f} tokens per request<extra></extra>"
      };
    });
    var layout = baseLayout("Longest context per GPU count, at " + number(inputs.body.concurrency) + " concurrent", "GPUs per replica", "Prompt + output per request (tokens)");
    layout.xaxis.type = "category";
    var ys = [];
    data.forEach(function (t) { ys = ys.concat(t.y); });
    logAxis(layout.yaxis, ys.concat([inputs.context || null, inputs.window || null]), 1.6);
    var lines = [];
    var notes = [];
    if (inputs.context) { lines.push([inputs.context, "dash", "your requests: " + number(inputs.context)]); }
    if (inputs.window) { lines.push([inputs.window, "dot", "model's window: " + number(inputs.window)]); }
    layout.shapes = lines.map(function (l) {
      return { type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: l[0], y1: l[0], line: { color: TARGET_COLOUR, width: 1.2, dash: l[1] } };
    });
    lines.forEach(function (l) {
      notes.push({ xref: "paper", x: 1, xanchor: "right", yref: "y", y: Math.log10(l[0]), yanchor: "bottom", showarrow: false, text: l[2] + " tokens", font: { size: 11, color: TARGET_COLOUR } });
    });
    layout.annotations = notes;
    if (!data.some(function (t) { return t.y.some(function (y) { return y !== null; }); })) { empty(els.context, "The model fits none of these GPUs at these counts."); return; }
    draw(els.context, data, layout);
  }

  // ---- one update --------------------------------------------------------------------------

  function status(text, busy) {
    els.status.textContent = text;
    els.status.classList.toggle("busy", Boolean(busy));
  }

  function fail(text) {
    els.error.textContent = text;
    els.error.hidden = false;
    status("Not updated.", false);
  }

  function withoutTarget(body, extra) {
    var copy = JSON.parse(JSON.stringify(body));
    delete copy.latency_target;
    Object.keys(extra).forEach(function (k) { copy[k] = extra[k]; });
    return copy;
  }

  function update() {
    var mine = ++generation;
    if (controller) { controller.abort(); }
    controller = new AbortController();
    var signal = controller.signal;
    clearErrors("save");
    els.error.hidden = true;
    var inputs = read();
    var loose = showErrors(inputs.errors);
    if (Object.keys(inputs.errors).length) {
      if (loose.length) { fail(loose.join(" ")); }
      status("Fix the inputs marked in red to update the figures.", false);
      return Promise.resolve();
    }
    status("Estimating…", true);
    return estimate(inputs.body, signal).then(function (answer) {
      if (mine !== generation) { return null; }
      if (answer.status !== 200) {
        var field = answer.data && answer.data.field;
        var message = (answer.data && answer.data.detail) || "";
        if (field && message.indexOf(field + ": ") === 0) { message = message.slice(field.length + 2); }
        var unclaimed = field && answer.status === 400 ? showErrors(obj(field, message)) : [refusal(answer)];
        if (unclaimed.length) { fail(unclaimed.join(" ")); } else { status("Fix the inputs marked in red to update the figures.", false); }
        return null;
      }
      var rows = sorted(answer.data.estimates || []);
      renderTable(rows);
      renderSummary(rows, inputs);
      var leading = rows.filter(function (e) { return e.fits; }).slice(0, setup.leading).map(function (e) { return e.gpu; });
      if (!leading.length) {
        empty(els.throughput, "No GPU fits: nothing to chart.");
        empty(els.context, "No GPU fits: nothing to chart.");
        status("Updated.", false);
        return null;
      }
      status("Estimating the charts…", true);
      var sweep = setup.sweep.slice();
      if (sweep.indexOf(inputs.body.concurrency) === -1) {
        sweep.push(inputs.body.concurrency);
        sweep.sort(function (a, b) { return a - b; });
      }
      var counts = setup.counts;
      var bodies = sweep.map(function (conc) {
        return withoutTarget(inputs.body, { concurrency: conc, gpus: leading });
      }).concat(counts.map(function (n) {
        return withoutTarget(inputs.body, { gpu_count: n, gpus: leading });
      }));
      return inTurn(bodies, signal, mine).then(function (answers) {
        if (mine !== generation) { return null; }
        if (answers.some(function (a) { return !a; })) { return null; }  // superseded
        var bad = answers.filter(function (a) { return a.status !== 200; })[0];
        if (bad) { fail(refusal(bad)); return null; }
        var lists = answers.map(function (a) { return a.data.estimates || []; });
        throughputChart(leading, sweep, lists.slice(0, sweep.length), inputs);
        contextChart(leading, counts, lists.slice(sweep.length), inputs);
        status("Updated: " + rows.length + " GPUs estimated; charts for the leading " + leading.length + ".", false);
        return null;
      });
    }).catch(function (exc) {
      if (exc && exc.name === "AbortError") { return; }
      if (mine === generation) { fail("The estimate service could not be reached: " + (exc && exc.message ? exc.message : "network error") + "."); }
    });
  }

  // The charts' estimates, IN_FLIGHT at a time, answers in order. One at a time: each is a few
  // milliseconds of engine work (the sweep's 14 calls take well under a second in all, and
  // repeated inputs come from the cache), a burst would queue other users' requests behind it,
  // and the test suite's live server shares one SQLite connection between its threads.
  function inTurn(bodies, signal, mine) {
    var answers = new Array(bodies.length);
    var next = 0;
    function worker() {
      if (next >= bodies.length || mine !== generation) { return Promise.resolve(); }
      var k = next++;
      return estimate(bodies[k], signal).then(function (answer) { answers[k] = answer; return worker(); });
    }
    var workers = [];
    for (var w = 0; w < Math.min(IN_FLIGHT, bodies.length); w++) { workers.push(worker()); }
    return Promise.all(workers).then(function () { return answers; });
  }

  function obj(k, v) { var o = {}; o[k] = v; return o; }

  function later() {
    if (timer) { clearTimeout(timer); }
    status("Waiting for you to finish typing…", true);
    timer = setTimeout(update, setup.debounce_ms);
  }

  // ---- save as brief -----------------------------------------------------------------------

  function save(event) {
    event.preventDefault();
    if (!setup.can_save) { return; }
    // Enter in an input of the calculator asks again; only the name field or the button saves.
    var active = document.activeElement;
    if (active && form.contains(active)) {
      update();
      return;
    }
    clearErrors();
    var inputs = read();
    var loose = showErrors(inputs.errors);
    var name = els.name.value.trim();
    if (!name) { loose = loose.concat(showErrors({ name: "Give the brief a name." })); inputs.errors.name = true; }
    if (Object.keys(inputs.errors).length) {
      if (loose.length) { els.saveErrors.textContent = loose.join(" "); els.saveErrors.hidden = false; }
      return;
    }
    var body = JSON.parse(JSON.stringify(inputs.body));
    body.name = name;
    if (els.team && els.team.value) { body.team = Number(els.team.value); }
    if (!body.latency_target && body.workload_type === "BATCH_INFERENCE") { body.latency_target = "offline"; }
    els.saveButton.disabled = true;
    post(setup.urls.briefs, body).then(function (answer) {
      if (answer.status === 201 && answer.data.id) {
        window.location.assign(setup.urls.brief.replace("{id}", String(answer.data.id)));
        return;
      }
      els.saveButton.disabled = false;
      var errors = answer.status === 400 && answer.data.errors ? flatten(answer.data.errors) : { detail: refusal(answer) };
      // The database's unique (team, name) check answers for the whole brief: it is the name's.
      Object.keys(errors).forEach(function (key) {
        if (/already exists/.test(errors[key]) && /Name/.test(errors[key])) {
          delete errors[key];
          errors.name = "A brief of this name already exists in the team: choose another name.";
        }
      });
      var unclaimed = showErrors(errors);
      if (unclaimed.length) { els.saveErrors.textContent = "Not saved: " + unclaimed.join(" "); els.saveErrors.hidden = false; }
    }).catch(function (exc) {
      els.saveButton.disabled = false;
      els.saveErrors.textContent = "Not saved: " + (exc && exc.message ? exc.message : "network error") + ".";
      els.saveErrors.hidden = false;
    });
  }

  // ---- start -------------------------------------------------------------------------------

  function sourceChanged() {
    var config = usingConfig();
    els.presetField.hidden = config;
    els.configField.hidden = !config;
    later();
  }

  function start() {
    form = document.getElementById("whatif-form");
    var source = document.getElementById("whatif-setup");
    if (!form || !source) { return; }
    setup = JSON.parse(source.textContent);
    var get = function (id) { return document.getElementById(id); };
    els = {
      workload: get("wi-workload"), preset: get("wi-preset"), config: get("wi-config"),
      sourceConfig: get("wi-source-config"), sourcePreset: get("wi-source-preset"),
      presetField: get("wi-preset-field"), configField: get("wi-config-field"),
      weight: get("wi-weight-precision"), kv: get("wi-kv-precision"), weightsNote: get("wi-weights-note"),
      inputTokens: get("wi-input-tokens"), outputTokens: get("wi-output-tokens"), concurrency: get("wi-concurrency"),
      ttft: get("wi-ttft"), itl: get("wi-itl"), name: get("wi-name"), team: get("wi-team"),
      saveButton: get("wi-save-button"), saveErrors: get("wi-save-errors"),
      status: get("wi-status"), error: get("wi-error"), best: get("wi-best"), warnings: get("wi-warnings"),
      notes: get("wi-notes"), table: get("fit-table"), throughput: get("throughput-chart"), context: get("context-chart")
    };
    [els.sourceConfig, els.sourcePreset].forEach(function (r) { r.addEventListener("change", sourceChanged); });
    [els.workload, els.preset, els.weight, els.kv].forEach(function (s) { s.addEventListener("change", later); });
    [els.config, els.inputTokens, els.outputTokens, els.concurrency, els.ttft, els.itl].forEach(function (i) {
      i.addEventListener("input", later);
    });
    form.addEventListener("submit", save);
    sourceChanged();
    if (timer) { clearTimeout(timer); }
    update();
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
