/* A small SQL highlighter: one regex tokenizer, HTML-escaped output, no dependencies. */
(function (global) {
  "use strict";
  var KEYWORDS = ("select from where and or not in is null as on join left right full inner outer cross natural " +
    "group by order having limit offset union all intersect except distinct case when then else end with " +
    "recursive asc desc nulls first last between like ilike similar exists any some cast over partition " +
    "window rows range preceding following current row filter within using values lateral true false " +
    "interval fetch next only top unknown escape collate returning insert update delete into set create " +
    "drop alter table view index").split(" ");
  var KW = {};
  KEYWORDS.forEach(function (k) { KW[k] = true; });
  var TOKEN = new RegExp([
    "(--[^\\n]*|/\\*[\\s\\S]*?(?:\\*/|$))",          // 1 comment
    "('(?:[^']|'')*'?)",                              // 2 string
    "(\"(?:[^\"]|\"\")*\"?|`[^`]*`?|\\[[^\\]]*\\])", // 3 quoted identifier
    "(\\b\\d+(?:\\.\\d+)?(?:e[+-]?\\d+)?\\b)",         // 4 number
    "([A-Za-z_][A-Za-z0-9_$]*)",                       // 5 word
    "(::|<>|!=|<=|>=|\\|\\||[-+*/%=<>(),;.])",        // 6 operator / punctuation
    "(\\s+)",                                          // 7 space
    "([\\s\\S])"                                       // 8 anything else
  ].join("|"), "gi");

  function esc(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  function highlight(sql) {
    var out = [], m, rest;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(sql)) !== null) {
      if (m[0] === "") { TOKEN.lastIndex++; continue; }
      var t = m[0];
      if (m[1]) out.push('<span class="tok-com">' + esc(t) + "</span>");
      else if (m[2]) out.push('<span class="tok-str">' + esc(t) + "</span>");
      else if (m[3]) out.push('<span class="tok-id">' + esc(t) + "</span>");
      else if (m[4]) out.push('<span class="tok-num">' + esc(t) + "</span>");
      else if (m[5]) {
        rest = sql.slice(TOKEN.lastIndex);
        if (KW[t.toLowerCase()]) out.push('<span class="tok-kw">' + esc(t) + "</span>");
        else if (/^\s*\(/.test(rest)) out.push('<span class="tok-fn">' + esc(t) + "</span>");
        else out.push(esc(t));
      } else if (m[6]) out.push('<span class="tok-op">' + esc(t) + "</span>");
      else out.push(esc(t));
    }
    return out.join("");
  }

  global.SQLHighlight = { highlight: highlight, escape: esc };
})(window);
