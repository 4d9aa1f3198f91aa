// The dashboard's live part: one EventSource per page; the server sends
// HTML fragments it rendered (and escaped), which replace or extend the
// page. No inline script: the Content-Security-Policy allows only this
// file and htmx.
(function () {
  "use strict";
  var src = document.body.getAttribute("data-stream");
  if (!src || !window.EventSource) { return; }
  var live = document.getElementById("live");
  var convo = document.getElementById("convo");
  if (convo) {
    var last = convo.lastElementChild;
    if (last && last.id && last.id.indexOf("ev-") === 0) {
      src += (src.indexOf("?") < 0 ? "?" : "&") + "after=" + last.id.slice(3);
    }
  }
  function nodes(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }
  function processed(el) {
    if (window.htmx) { window.htmx.process(el); }
  }
  // While the user types or clicks in the fleet, updates of it wait: a
  // replaced row would drop what was typed, or the button being clicked.
  var heldFleet = null, heldRows = {};
  function busy(el) {
    var a = document.activeElement;
    return a && a !== document.body && el.contains(a);
  }
  function putFleet(html) {
    var body = document.getElementById("fleet-body");
    if (!body) { return; }
    if (busy(body)) { heldFleet = html; heldRows = {}; return; }
    body.innerHTML = html;
    processed(body);
  }
  function putRow(row) {
    var old = document.getElementById(row.id);
    if (!old) { return; }
    if (busy(old)) { heldRows[row.id] = row; return; }
    old.replaceWith(row);
    processed(row);
  }
  function flush() {
    if (heldFleet !== null) { var h = heldFleet; heldFleet = null; putFleet(h); }
    var rows = heldRows;
    heldRows = {};
    Object.keys(rows).forEach(function (id) { putRow(rows[id]); });
  }
  document.addEventListener("focusout", function (e) {
    var body = document.getElementById("fleet-body");
    if (body && !(e.relatedTarget && body.contains(e.relatedTarget))) { setTimeout(flush, 0); }
  });
  var es = new EventSource(src);
  es.onopen = function () { if (live) { live.hidden = false; live.textContent = "live"; } };
  es.onerror = function () { if (live) { live.textContent = "reconnecting…"; } };
  es.addEventListener("fleet", function (e) { putFleet(e.data); });
  es.addEventListener("need", function (e) {
    var need = document.getElementById("need");
    if (need) { need.textContent = e.data; }
  });
  es.addEventListener("row", function (e) {
    var frag = nodes("<table><tbody>" + e.data + "</tbody></table>");
    var row = frag.querySelector("tr");
    if (!row) { return; }
    putRow(row);
  });
  es.addEventListener("line", function (e) {
    if (!convo) { return; }
    var frag = nodes(e.data);
    var el = frag.firstElementChild;
    if (!el || (el.id && document.getElementById(el.id))) { return; }
    var atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    var empty = convo.querySelector(".empty");
    if (empty) { empty.remove(); }
    convo.appendChild(el);
    if (atBottom) { el.scrollIntoView({block: "end"}); }
  });
  es.addEventListener("reload", function () { es.close(); window.location.reload(); });
  document.body.addEventListener("htmx:afterRequest", function (e) {
    var form = e.target.closest && e.target.closest("form");
    if (form && e.detail.successful && form.querySelector("textarea, input[name=text]")) { form.reset(); }
    if (document.activeElement && document.activeElement.blur) { document.activeElement.blur(); }
    setTimeout(flush, 0);
  });
})();
