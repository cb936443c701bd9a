/* actsagent copilot page: conversations, live turns over server-sent events, plan tree, SQL, rows.
   Vanilla JS, no build step, no network beyond this server. */
(function () {
  "use strict";

  var S = {
    token: localStorage.getItem("actsagent-token") || "",
    conv: null,          // current conversation id
    convs: [],
    turns: {},           // turn id -> folded state
    order: [],           // turn ids in display order
    sources: {},         // turn id -> EventSource
    mode: "ask",
    status: null
  };

  var $ = function (id) { return document.getElementById(id); };
  var esc = window.SQLHighlight.escape;

  function h(tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === "class") e.className = attrs[k];
      else if (k === "text") e.textContent = attrs[k];
      else if (k === "html") e.innerHTML = attrs[k];
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
      else if (attrs[k] !== null && attrs[k] !== undefined && attrs[k] !== false) e.setAttribute(k, attrs[k]);
    }
    (children || []).forEach(function (c) { if (c) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  // ---- API -------------------------------------------------------------------------------------
  function headers(json) {
    var hd = {};
    if (json) hd["Content-Type"] = "application/json";
    if (S.token) hd["X-Actsagent-Token"] = S.token;
    return hd;
  }

  function api(method, path, body) {
    return fetch(path, { method: method, headers: headers(body !== undefined),
                         body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        if (r.status === 401) { askToken(); throw new Error("The access token is missing or wrong."); }
        if (r.status === 204) return null;
        return r.json().catch(function () { return {}; }).then(function (data) {
          if (!r.ok) throw new Error(detail(data) || ("HTTP " + r.status));
          return data;
        });
      });
  }

  function detail(data) {
    if (!data || !data.detail) return "";
    if (typeof data.detail === "string") return data.detail;
    return data.detail.map(function (d) { return (d.loc ? d.loc.slice(-1)[0] + ": " : "") + d.msg; }).join("; ");
  }

  function toast(msg, kind) {
    var t = h("div", { "class": "toast " + (kind || "err"), "data-testid": "toast", text: msg });
    document.body.appendChild(t);
    setTimeout(function () { t.classList.add("out"); }, 4500);
    setTimeout(function () { t.remove(); }, 5200);
  }

  // ---- token -----------------------------------------------------------------------------------
  function askToken() {
    $("token-modal").classList.remove("hidden");
    $("token-input").focus();
  }

  $("token-form").addEventListener("submit", function (e) {
    e.preventDefault();
    S.token = $("token-input").value.trim();
    localStorage.setItem("actsagent-token", S.token);
    fetch("/api/status", { headers: headers(false) }).then(function (r) {
      if (r.status === 401) { $("token-error").textContent = "That token is not right."; return; }
      $("token-modal").classList.add("hidden");
      $("token-error").textContent = "";
      boot();
    });
  });

  // ---- status, schema, conversations ---------------------------------------------------------------
  function loadStatus() {
    return api("GET", "/api/status").then(function (st) {
      S.status = st;
      $("db-badge").textContent = st.database;
      $("db-status").innerHTML = '<span class="dot ' + (st.database_ok ? "ok" : "bad") + '"></span>' + esc(st.database);
      $("llm-badge").textContent = st.llm ? st.llm_note : "no LLM";
      $("llm-badge").className = "badge " + (st.llm ? "badge-llm" : "badge-warn");
      $("no-llm").textContent = st.llm ? "" : st.llm_note;
      $("no-llm").classList.toggle("hidden", !!st.llm);
      $("db-down").textContent = st.database_ok ? "" : "Database unavailable: " + st.database_error;
      $("db-down").classList.toggle("hidden", !!st.database_ok);
      if (!st.llm && S.mode === "ask" && !$("input").value) setMode("run");  // asking needs a model
      renderExamples();
    });
  }

  function renderExamples() {
    var box = $("examples");
    box.innerHTML = "";
    var demo = S.status && /actsagent_demo/.test(S.status.database);
    var items = S.status && S.status.llm ? (demo ? [
      "Revenue per month in 2024",
      "Top 5 customers by total paid",
      "How many orders per status?",
      "Which product categories sell best?"
    ] : ["How many rows does each table have?"]) : (demo ? [
      "SELECT status, count(*) AS orders FROM orders GROUP BY status ORDER BY orders DESC",
      "SELECT category, sum(qty * i.unit_price) AS revenue FROM order_items i JOIN product_catalog p USING (prod_id) GROUP BY category ORDER BY revenue DESC"
    ] : []);
    items.forEach(function (q) {
      box.appendChild(h("button", { "class": "chip", text: q, onclick: function () {
        if (!S.status.llm) setMode("run");
        $("input").value = q; $("input").focus(); autosize();
      } }));
    });
  }

  function loadSchema() {
    $("schema-body").textContent = "loading…";
    api("GET", "/api/schema").then(function (sc) {
      var body = $("schema-body");
      body.innerHTML = "";
      sc.tables.forEach(function (t) {
        var cols = h("ul", { "class": "schema-cols" }, t.columns.map(function (c) {
          return h("li", { title: c.comment || "" }, [
            h("span", { "class": "col-name" + (c.pk ? " pk" : ""), text: c.name }),
            h("span", { "class": "col-type", text: c.type + (c.references ? " → " + c.references : "") })]);
        }));
        body.appendChild(h("details", { "class": "schema-table" }, [
          h("summary", {}, [h("span", { "class": "tbl-name", text: t.name }),
                            h("span", { "class": "tbl-rows", text: t.rows != null ? "~" + t.rows + " rows" : "" })]),
          t.comment ? h("div", { "class": "tbl-comment", text: t.comment }) : null, cols]));
      });
    }).catch(function (e) { $("schema-body").textContent = e.message; });
  }

  function loadConversations() {
    return api("GET", "/api/conversations").then(function (list) {
      S.convs = list;
      renderConversationList();
    });
  }

  function ago(ts) {
    var s = Date.now() / 1000 - ts;
    if (s < 60) return "just now";
    if (s < 3600) return Math.floor(s / 60) + " min ago";
    if (s < 86400) return Math.floor(s / 3600) + " h ago";
    return new Date(ts * 1000).toLocaleDateString();
  }

  function renderConversationList() {
    var nav = $("conv-list");
    nav.innerHTML = "";
    if (!S.convs.length) nav.appendChild(h("div", { "class": "side-empty", text: "No conversations yet." }));
    S.convs.forEach(function (c) {
      var item = h("a", { "class": "conv-item" + (c.id === S.conv ? " active" : ""), href: "#/c/" + c.id,
                          "data-testid": "conversation-item", "data-id": c.id }, [
        h("div", { "class": "conv-title", text: c.title }),
        h("div", { "class": "conv-meta", text: c.turns + (c.turns === 1 ? " question · " : " questions · ") + ago(c.updated_at) }),
        h("button", { "class": "conv-del", title: "Delete conversation", text: "×", onclick: function (e) {
          e.preventDefault(); e.stopPropagation();
          if (!confirm("Delete this conversation?")) return;
          api("DELETE", "/api/conversations/" + c.id).then(function () {
            if (S.conv === c.id) newConversation();
            loadConversations();
          }).catch(function (err) { toast(err.message); });
        } })]);
      nav.appendChild(item);
    });
  }

  function newConversation() {
    closeSources();
    S.conv = null; S.turns = {}; S.order = [];
    if (location.hash) history.pushState(null, "", location.pathname);
    $("conv-title").textContent = "New conversation";
    renderThread();
    renderConversationList();
    $("input").focus();
  }

  function openConversation(cid) {
    closeSources();
    return api("GET", "/api/conversations/" + cid).then(function (conv) {
      S.conv = conv.id; S.turns = {}; S.order = [];
      $("conv-title").textContent = conv.title;
      conv.turn_list.forEach(function (t) {
        var st = newTurnState(t);
        t.events.forEach(function (ev) { fold(st, ev); });
        st.status = t.status;
        S.turns[t.id] = st; S.order.push(t.id);
        if (t.status === "running") stream(t.id, st.lastSeq);
      });
      renderThread();
      renderConversationList();
      scrollDown(true);
    }).catch(function (e) { toast(e.message); newConversation(); });
  }

  function route() {
    var m = location.hash.match(/^#\/c\/([\w-]+)/);
    if (m) { if (m[1] !== S.conv) openConversation(m[1]); }
    else if (S.conv) newConversation();
  }

  // ---- turns -----------------------------------------------------------------------------------
  function newTurnState(t) {
    return { id: t.id, kind: t.kind, question: t.question || "", sql: t.sql, status: t.status || "running",
             lastSeq: 0, tree: null, steps: [], dialog: [], final: null, result: null, answer: null,
             errors: [], t0: t.created_at, t1: null, llm: null, showAllRows: false, editing: false, planOpen: null };
  }

  function fold(st, ev) {
    if (ev.seq <= st.lastSeq) return false;
    st.lastSeq = ev.seq;
    if (ev.tree) st.tree = ev.tree;
    var d = ev.data || {};
    switch (ev.type) {
      case "start":
        st.llm = d.llm; if (!st.t0) st.t0 = ev.ts; st.status = "running";
        break;
      case "plan": case "node_start": case "node_end": case "candidate": case "note":
        st.steps.push({ type: ev.type, node: ev.node_id, message: ev.message });
        break;
      case "clarify":
        st.dialog.push({ question: d.question, options: d.options, answer: null });
        st.steps.push({ type: ev.type, node: ev.node_id, message: d.question });
        break;
      case "reply":
        var open = st.dialog.filter(function (q) { return q.answer === null; });
        if (open.length) open[open.length - 1].answer = ev.message;
        else st.dialog.push({ question: "", options: [], answer: ev.message });
        st.status = "running";
        break;
      case "final": st.final = d; break;
      case "result": st.result = d.result; st.resultSql = d.sql; break;
      case "answer": st.answer = d; break;
      case "error":
        st.errors.push({ message: ev.message, kind: d.kind || "" });
        if (d.position) st.errorPos = d.position;
        break;
      case "done": st.status = d.status || "done"; st.t1 = ev.ts; break;
    }
    return true;
  }

  function stream(tid, after) {
    if (S.sources[tid]) S.sources[tid].close();
    var url = "/api/turns/" + tid + "/events?after=" + (after || 0) + (S.token ? "&token=" + encodeURIComponent(S.token) : "");
    var es = new EventSource(url);
    S.sources[tid] = es;
    es.addEventListener("step", function (e) {
      var st = S.turns[tid];
      if (!st) return;
      if (fold(st, JSON.parse(e.data))) { renderTurn(st); scrollDown(false); }
    });
    es.addEventListener("end", function () {
      es.close(); delete S.sources[tid];
      var st = S.turns[tid];
      if (st) renderTurn(st);
      loadConversations();
    });
    es.onerror = function () {
      if (es.readyState === EventSource.CLOSED) {
        delete S.sources[tid];
        fetch("/api/status", { headers: headers(false) }).then(function (r) { if (r.status === 401) askToken(); });
      }
    };
  }

  function closeSources() {
    Object.keys(S.sources).forEach(function (k) { S.sources[k].close(); });
    S.sources = {};
  }

  // ---- rendering ---------------------------------------------------------------------------------
  function renderThread() {
    var thread = $("thread");
    Array.prototype.slice.call(thread.querySelectorAll(".turn")).forEach(function (n) { n.remove(); });
    $("empty").classList.toggle("hidden", S.order.length > 0);
    S.order.forEach(function (tid) { thread.appendChild(turnElement(S.turns[tid])); });
  }

  function renderTurn(st) {
    var old = document.getElementById("turn-" + st.id);
    var fresh = turnElement(st);
    if (old) old.replaceWith(fresh); else { $("thread").appendChild(fresh); $("empty").classList.add("hidden"); }
  }

  function scrollDown(force) {
    var th = $("thread");
    if (force || th.scrollHeight - th.scrollTop - th.clientHeight < 400) th.scrollTop = th.scrollHeight;
  }

  var STATUS_TEXT = { running: "working…", awaiting_clarification: "needs your answer", done: "answered",
                      failed: "failed", interrupted: "interrupted" };

  function turnElement(st) {
    var art = h("article", { "class": "turn", id: "turn-" + st.id, "data-status": st.status, "data-testid": "turn" });
    art.appendChild(userMessage(st));
    var card = h("div", { "class": "card agent" });
    var secs = st.t1 && st.t0 ? " in " + (Math.max(0, st.t1 - st.t0)).toFixed(1) + " s" : "";
    card.appendChild(h("div", { "class": "card-head" }, [
      h("span", { "class": "avatar", text: "◆" }),
      h("span", { "class": "who", text: st.kind === "run" ? "Ran your SQL" : st.kind === "repair" ? "Repair" : "Copilot" }),
      h("span", { "class": "pill pill-" + st.status, "data-testid": "turn-status", text: STATUS_TEXT[st.status] + (st.status === "done" ? secs : "") }),
      st.status === "running" ? h("span", { "class": "spinner" }) : null,
      st.status === "running" && st.steps.length ? h("span", { "class": "live-step", "data-testid": "live-step",
        text: firstLine(st.steps[st.steps.length - 1].message || "") }) : null,
      h("span", { "class": "spacer" }),
      st.final && st.final.llm_calls ? h("span", { "class": "usage", title: "LLM calls and tokens this answer used",
        text: st.final.llm_calls + " LLM call" + (st.final.llm_calls === 1 ? "" : "s") + " · " +
              (st.final.tokens >= 1000 ? (st.final.tokens / 1000).toFixed(1) + "k" : st.final.tokens) + " tokens" }) : null]));
    if (st.llm === false && st.kind !== "run") card.appendChild(h("div", { "class": "note-llm", text: "LLM-free path (no model configured)" }));
    var plan = planSection(st);
    if (plan) card.appendChild(plan);
    st.dialog.forEach(function (q, i) { card.appendChild(clarifySection(st, q, i === st.dialog.length - 1)); });
    st.errors.forEach(function (e) {
      card.appendChild(h("div", { "class": "error-box", "data-testid": "error-message" }, [
        h("span", { "class": "error-kind", text: errorTitle(e.kind) }), h("span", { text: e.message })]));
    });
    if (st.answer) card.appendChild(h("div", { "class": "answer-text", "data-testid": "answer-text", text: st.answer.text }));
    var sql = (st.final && st.final.final_sql) || st.resultSql;
    if (sql) card.appendChild(sqlSection(st, sql));
    if (st.result) {  // the rows, and beside them (or below, when the table is wide) the chart
      var viz = h("div", { "class": "viz" }, [tableSection(st)]);
      if (st.answer && st.answer.chart) {
        var box = h("div", { "class": "chart-box", "data-testid": "chart" });
        window.MiniChart.render(box, st.answer.chart, st.result);
        viz.appendChild(box);
      }
      card.appendChild(viz);
    }
    art.appendChild(card);
    return art;
  }

  function errorTitle(kind) {
    return { database: "Database", llm: "Language model", guard: "Guard", sql: "SQL error", internal: "Internal error",
             user: "Problem" }[kind] || "Problem";
  }

  function userMessage(st) {
    var kids = [];
    if (st.question && st.kind !== "run") kids.push(h("div", { "class": "q-text", text: st.question }));
    if (st.sql) {
      kids.push(h("div", { "class": "q-label", text: st.kind === "run" ? "Run this SQL" : "Repair this SQL" }));
      kids.push(h("pre", { "class": "sql small", html: window.SQLHighlight.highlight(st.sql) }));
    }
    return h("div", { "class": "user" }, [h("div", { "class": "bubble", "data-testid": "user-message" }, kids)]);
  }

  // the agent's own plan tree (graphs/tree.py): a pending node the run has started is drawn as running
  var NODE_ICON = { pending: "○", running: "◉", done: "✓", unconfirmed: "~", failed: "✗", refuted: "↩", skipped: "↩", accepted: "★" };
  var GIVEN_UP = { refuted: "refuted", skipped: "not taken", failed: "failed" };

  function shownStatus(n) { return n.status === "pending" && n.started_at ? "running" : n.status; }

  function nodeDetail(n) {
    if (n.status === "refuted" && n.verdict && n.verdict.reasons && n.verdict.reasons.length) return n.verdict.reasons.slice(0, 3).join("; ");
    if (n.status === "skipped" && !n.error && !n.summary) return "you chose another reading";
    return n.error || n.summary || "";
  }

  function planSection(st) {
    var tree = st.tree;
    var hasTree = tree && tree.root && tree.nodes[tree.root];
    if (!hasTree && !st.steps.length) return null;
    var counts = { refuted: 0, failed: 0 };
    if (hasTree) Object.keys(tree.nodes).forEach(function (k) { var s = tree.nodes[k].status; if (counts[s] !== undefined) counts[s]++; });
    var summary = (hasTree ? Object.keys(tree.nodes).length + " nodes" : "") +
      (counts.refuted ? " · " + counts.refuted + " refuted" : "") + (counts.failed ? " · " + counts.failed + " failed" : "") +
      " · " + st.steps.length + " steps";
    var det = h("details", { "class": "plan", "data-testid": "plan-tree" });
    var open = st.planOpen === null ? true : st.planOpen;
    if (open) det.setAttribute("open", "");
    det.addEventListener("toggle", function () { if (det.open !== open) st.planOpen = det.open; });
    det.appendChild(h("summary", {}, [h("span", { "class": "sec-title", text: "Plan" }), h("span", { "class": "muted", text: summary })]));
    if (hasTree) {
      var ul = h("ul", { "class": "tree" });
      ul.appendChild(nodeElement(tree, tree.root, 0));
      det.appendChild(ul);
    }
    if (st.steps.length) {
      var log = h("details", { "class": "steps" }, [h("summary", { text: "Step log" })]);
      var ol = h("ol", {});
      st.steps.forEach(function (s) {
        ol.appendChild(h("li", { "class": "step step-" + s.type }, [
          h("span", { "class": "step-type", text: s.type.replace("_", " ") }),
          s.node ? h("span", { "class": "step-node", text: s.node }) : null,
          h("span", { "class": "step-msg", text: s.message || "" })]));
      });
      log.appendChild(ol);
      det.appendChild(log);
    }
    return det;
  }

  function nodeElement(tree, id, depth) {
    var n = tree.nodes[id];
    if (!n || depth > 40) return h("li", { text: id });
    var status = shownStatus(n), detail = nodeDetail(n);
    var row = h("div", { "class": "node node-" + status + (tree.cursor === id ? " cursor" : ""), "data-testid": "plan-node",
                         "data-status": status, "data-node": id }, [
      h("span", { "class": "node-icon", text: NODE_ICON[status] || "○", title: status }),
      h("span", { "class": "node-label", text: n.description || n.id }),
      h("span", { "class": "node-tool", text: n.tool }),
      GIVEN_UP[status] ? h("span", { "class": "node-why", title: detail,
        text: GIVEN_UP[status] + (detail ? ": " + firstLine(detail) : "") })
        : (detail ? h("span", { "class": "node-detail", title: detail, text: firstLine(detail) }) : null)]);
    var li = h("li", {}, [row]);
    if (n.children && n.children.length) {
      var ul = h("ul", {});
      n.children.forEach(function (c) { ul.appendChild(nodeElement(tree, c, depth + 1)); });
      li.appendChild(ul);
    }
    return li;
  }

  function firstLine(s) {
    var line = String(s).split("\n")[0];
    return line.length > 150 ? line.slice(0, 149) + "…" : line;
  }

  function clarifySection(st, q, last) {
    var box = h("div", { "class": "clarify" + (q.answer === null ? " open" : ""), "data-testid": "clarify" });
    box.appendChild(h("div", { "class": "clarify-q" }, [h("span", { "class": "clarify-icon", text: "?" }), h("span", { text: q.question })]));
    if (q.answer !== null) {
      box.appendChild(h("div", { "class": "clarify-a", "data-testid": "clarify-answer", text: "You answered: " + q.answer }));
      return box;
    }
    var waiting = last && st.status === "awaiting_clarification";
    var opts = h("div", { "class": "options" });
    q.options.forEach(function (o) {
      opts.appendChild(h("button", { "class": "btn option", "data-testid": "clarify-option", text: o, disabled: !waiting,
                                     onclick: function () { reply(st, o); } }));
    });
    box.appendChild(opts);
    if (waiting) {
      var inp = h("input", { "class": "clarify-input", placeholder: "…or say it in your own words", "data-testid": "clarify-input" });
      inp.addEventListener("keydown", function (e) { if (e.key === "Enter" && inp.value.trim()) reply(st, inp.value.trim()); });
      box.appendChild(h("div", { "class": "clarify-own" }, [inp,
        h("button", { "class": "btn btn-primary btn-sm", text: "Reply", onclick: function () { if (inp.value.trim()) reply(st, inp.value.trim()); } })]));
    }
    return box;
  }

  function reply(st, answer) {
    api("POST", "/api/turns/" + st.id + "/clarify", { answer: answer }).then(function () {
      st.status = "running";
      renderTurn(st);
      stream(st.id, st.lastSeq);
    }).catch(function (e) { toast(e.message); });
  }

  function sqlSection(st, sql) {
    var f = st.final || {};
    var sec = h("div", { "class": "sql-sec", "data-testid": "final-sql-section" });
    var verdict = null;
    if (f.best_effort) verdict = h("span", { "class": "verdict warn", "data-testid": "best-effort",
      text: "best effort: nothing confirmed it", title: "no check or judge approval settled this answer: see the notes below" });
    else if (f.verdict) verdict = h("span", { "class": "verdict" + (f.verdict_ok === false ? " warn" : ""), text: f.verdict, title: f.verdict });
    var head = h("div", { "class": "sec-head" }, [h("span", { "class": "sec-title", text: "SQL" }), verdict,
      h("span", { "class": "spacer" }),
      h("button", { "class": "btn btn-ghost btn-sm", text: "Copy", onclick: function (e) {
        (navigator.clipboard ? navigator.clipboard.writeText(sql) : Promise.reject()).then(function () { e.target.textContent = "Copied"; },
          function () { toast("Copy is not available here", "info"); });
      } }),
      st.status === "failed" && st.kind === "run" && !st.editing ?
        h("button", { "class": "btn btn-sm btn-repair", "data-testid": "repair-sql", text: "Repair with the agent",
                      onclick: function () { submitEdit(st, st.sql || sql, "repair"); } }) : null,
      st.status === "awaiting_clarification" || st.status === "running" ? null :
        h("button", { "class": "btn btn-ghost btn-sm", "data-testid": "edit-sql", text: "Edit & rerun", onclick: function () {
          st.editing = true; renderTurn(st);
          var ta = document.querySelector("#turn-" + st.id + " textarea.sql-editor");
          if (ta) { ta.focus(); ta.setSelectionRange(ta.value.length, ta.value.length); }
        } })]);
    sec.appendChild(head);
    if (st.editing) {
      var ta = h("textarea", { "class": "sql-editor", "data-testid": "sql-editor", spellcheck: "false" });
      ta.value = sql;
      ta.rows = Math.min(18, sql.split("\n").length + 2);
      ta.addEventListener("keydown", function (e) { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submitEdit(st, ta.value, "run"); });
      sec.appendChild(ta);
      sec.appendChild(h("div", { "class": "edit-actions" }, [
        h("button", { "class": "btn btn-primary btn-sm", "data-testid": "run-edited", text: "Run (guarded)", onclick: function () { submitEdit(st, ta.value, "run"); } }),
        h("button", { "class": "btn btn-sm", "data-testid": "repair-edited", text: "Ask the agent to repair it", onclick: function () { submitEdit(st, ta.value, "repair"); } }),
        h("button", { "class": "btn btn-ghost btn-sm", text: "Cancel", onclick: function () { st.editing = false; renderTurn(st); } }),
        h("span", { "class": "muted small", text: "Ctrl+Enter runs" })]));
    } else {
      sec.appendChild(h("pre", { "class": "sql", "data-testid": "final-sql", html: markedSQL(sql, st.errorPos) }));
    }
    // why the run ended as it did (other readings left standing, a draft that stood, outvoting): text, never HTML
    var notes = (f.notes || []).filter(function (n) { return typeof n === "string" && n; }).slice(0, 8);
    if (notes.length) sec.appendChild(h("ul", { "class": "run-notes", "data-testid": "run-notes" },
      notes.map(function (n) { return h("li", { text: n }); })));
    return sec;
  }

  // The SQL with the token at the engine's error position (1-based) marked.
  function markedSQL(sql, pos) {
    var hl = window.SQLHighlight.highlight;
    if (!pos || pos < 1 || pos > sql.length) return hl(sql);
    var i = pos - 1, m = /^("[^"]*"|'[^']*'|[\w$.]+|\S)/.exec(sql.slice(i));
    var len = m ? m[0].length : 1;
    return hl(sql.slice(0, i)) + '<mark class="err-pos" title="the database reports the error here">' +
      hl(sql.slice(i, i + len)) + "</mark>" + hl(sql.slice(i + len));
  }

  function submitEdit(st, sql, action) {
    if (!sql.trim()) return;
    st.editing = false;
    renderTurn(st);
    startTurn("/api/conversations/" + S.conv + "/sql", { sql: sql, action: action, question: st.question || null });
  }

  function cell(v) {
    if (v === null || v === undefined) return h("td", { "class": "null", text: "NULL" });
    if (typeof v === "number") return h("td", { "class": "num", text: Number.isInteger(v) ? String(v) : v.toLocaleString(undefined, { maximumFractionDigits: 6 }) });
    if (typeof v === "boolean") return h("td", { "class": "bool", text: String(v) });
    var s = typeof v === "string" ? v : JSON.stringify(v);
    return h("td", { text: s.length > 300 ? s.slice(0, 299) + "…" : s, title: s.length > 300 ? s : null });
  }

  function csv(view) {
    var q = function (v) {
      if (v === null || v === undefined) return "";
      var s = String(v);
      return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    return [view.columns.map(q).join(",")].concat(view.rows.map(function (r) { return r.map(q).join(","); })).join("\n");
  }

  function tableSection(st) {
    var v = st.result;
    var limit = st.showAllRows ? v.rows.length : 50;
    var sec = h("div", { "class": "table-sec" });
    var meta = v.row_count + (v.row_count === 1 ? " row" : " rows") + (v.note ? " (" + v.note + ")" : "") +
      (v.elapsed_ms != null ? " · " + (v.elapsed_ms < 10 ? v.elapsed_ms.toFixed(1) : Math.round(v.elapsed_ms)) + " ms" : "");
    sec.appendChild(h("div", { "class": "sec-head" }, [h("span", { "class": "sec-title", text: "Rows" }),
      h("span", { "class": "muted", "data-testid": "row-count", text: meta }), h("span", { "class": "spacer" }),
      v.rows.length ? h("button", { "class": "btn btn-ghost btn-sm", text: "CSV", title: "Download these rows as CSV", onclick: function () {
        var a = h("a", { href: URL.createObjectURL(new Blob([csv(v)], { type: "text/csv" })), download: "result.csv" });
        document.body.appendChild(a); a.click(); a.remove();
      } }) : null]));
    if (!v.columns.length) { sec.appendChild(h("div", { "class": "muted", text: "The statement returned no columns." })); return sec; }
    var wrap = h("div", { "class": "table-wrap" });
    var table = h("table", { "class": "rows", "data-testid": "result-table" });
    table.appendChild(h("thead", {}, [h("tr", {}, v.columns.map(function (c, i) {
      return h("th", { title: v.types[i] || "" }, [c, v.types[i] ? h("span", { "class": "col-t", text: v.types[i] }) : null]);
    }))]));
    var tb = h("tbody", {});
    v.rows.slice(0, limit).forEach(function (r) { tb.appendChild(h("tr", {}, r.map(cell))); });
    table.appendChild(tb);
    wrap.appendChild(table);
    sec.appendChild(wrap);
    if (!v.rows.length) sec.appendChild(h("div", { "class": "empty-rows", text: "No rows." }));
    if (v.rows.length > limit) sec.appendChild(h("button", { "class": "btn btn-ghost btn-sm more", text: "Show all " + v.rows.length + " rows",
      onclick: function () { st.showAllRows = true; renderTurn(st); } }));
    return sec;
  }

  // ---- composer --------------------------------------------------------------------------------
  var PLACEHOLDER = { ask: "Ask a question about your data…", run: "Paste or write SQL to run (read-only, guarded)…",
                      repair: "Paste SQL that fails or returns the wrong thing…" };

  function setMode(mode) {
    S.mode = mode;
    Array.prototype.forEach.call(document.querySelectorAll(".mode"), function (b) { b.classList.toggle("active", b.dataset.mode === mode); });
    $("input").placeholder = PLACEHOLDER[mode];
    $("input").classList.toggle("mono", mode !== "ask");
    $("repair-question").classList.toggle("hidden", mode !== "repair");
  }

  function autosize() {
    var ta = $("input");
    ta.style.height = "auto";
    ta.style.height = Math.min(240, ta.scrollHeight + 2) + "px";
  }

  function ensureConversation() {
    if (S.conv) return Promise.resolve(S.conv);
    return api("POST", "/api/conversations", {}).then(function (c) {
      S.conv = c.id;
      history.pushState(null, "", "#/c/" + c.id);
      return c.id;
    });
  }

  function startTurn(path, body) {
    return api("POST", path, body).then(function (turn) {
      var st = newTurnState(turn);
      S.turns[turn.id] = st; S.order.push(turn.id);
      renderTurn(st);
      scrollDown(true);
      stream(turn.id, 0);
      loadConversations().then(function () {
        var c = S.convs.filter(function (x) { return x.id === S.conv; })[0];
        if (c) $("conv-title").textContent = c.title;
      });
      return turn;
    }).catch(function (e) { toast(e.message); throw e; });
  }

  function send() {
    var text = $("input").value.trim();
    if (!text) return;
    var btn = $("send");
    btn.disabled = true;
    ensureConversation().then(function (cid) {
      if (S.mode === "ask") return startTurn("/api/conversations/" + cid + "/ask", { question: text });
      return startTurn("/api/conversations/" + cid + "/sql",
        { sql: text, action: S.mode, question: S.mode === "repair" ? ($("repair-question").value.trim() || null) : null });
    }).then(function () {
      $("input").value = ""; $("repair-question").value = ""; autosize();
    }).catch(function () {}).then(function () { btn.disabled = false; $("input").focus(); });
  }

  $("send").addEventListener("click", send);
  $("input").addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  $("input").addEventListener("input", autosize);
  Array.prototype.forEach.call(document.querySelectorAll(".mode"), function (b) {
    b.addEventListener("click", function () { setMode(b.dataset.mode); $("input").focus(); });
  });
  $("new-conv").addEventListener("click", newConversation);
  $("schema-toggle").addEventListener("click", function () {
    var p = $("schema-panel");
    p.classList.toggle("hidden");
    if (!p.classList.contains("hidden")) loadSchema();
  });
  $("schema-close").addEventListener("click", function () { $("schema-panel").classList.add("hidden"); });
  window.addEventListener("hashchange", route);

  (function tokenFromUrl() {  // `actsagent serve --open` passes the token once in the URL
    var m = location.search.match(/[?&]token=([^&]+)/);
    if (m) {
      S.token = decodeURIComponent(m[1]);
      localStorage.setItem("actsagent-token", S.token);
      history.replaceState(null, "", location.pathname + location.hash);
    }
  })();

  function boot() {
    loadStatus().then(loadConversations).then(route).catch(function (e) { toast(e.message); });
  }
  boot();
})();
