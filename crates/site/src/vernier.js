// The report's only script (no library, nothing fetched): the index's tag filter (kept in the
// address, `?tag=kernel%3DA`) and the sorting of tables by a click on a column's heading.
// Every page reads fully without it.
"use strict";

// Index: show only the sessions that carry the chosen tag.
(function () {
  var filter = document.getElementById("tag-filter");
  if (!filter) return;
  var rows = document.querySelectorAll("tr[data-tags]");
  var count = document.getElementById("shown");
  function apply() {
    var want = filter.value;
    var shown = 0;
    rows.forEach(function (row) {
      var tags = row.getAttribute("data-tags").split("\n");
      var visible = want === "" || tags.indexOf(want) >= 0;
      row.hidden = !visible;
      if (visible) shown += 1;
    });
    if (count) count.textContent = shown + " of " + rows.length + " sessions shown";
  }
  // The filter in the address: a link or a reload shows the same rows.
  var wanted = new URLSearchParams(location.search).get("tag");
  if (wanted !== null) {
    for (var i = 0; i < filter.options.length; i++) {
      if (filter.options[i].value === wanted) filter.value = wanted;
    }
  }
  filter.addEventListener("change", function () {
    apply();
    var params = new URLSearchParams(location.search);
    if (filter.value === "") params.delete("tag"); else params.set("tag", filter.value);
    var query = params.toString();
    try {
      history.replaceState(null, "", location.pathname + (query ? "?" + query : "") + location.hash);
    } catch (e) {
      // A browser that refuses to change a file:// address keeps the filter without it.
    }
  });
  apply();
})();

// Tables: a click on a column's heading sorts the rows by it (numbers as numbers, `-` last),
// a second click the other way.
document.querySelectorAll("table").forEach(function (table) {
  var body = table.tBodies[0];
  if (!table.tHead || !body || body.rows.length < 2) return;
  var heads = table.tHead.rows[0].cells;
  function key(row, i) {
    var cell = row.cells[i];
    var text = cell ? cell.textContent.trim() : "";
    // A date (2023-11-14 22:13) sorts as text.
    if (/^\d{4}-\d\d-\d\d/.test(text)) return { text: text };
    var number = parseFloat(text.replace(/^[\[(]/, "").replace(/[+%]/g, ""));
    return isNaN(number) || !/^[-+\[(]?[0-9.]/.test(text) ? { text: text } : { number: number };
  }
  Array.prototype.forEach.call(heads, function (head, i) {
    head.classList.add("sortable");
    head.title = "sort by this column";
    head.addEventListener("click", function () {
      var up = head.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      head.setAttribute("aria-sort", up ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a, i), y = key(b, i), order;
        if (x.number !== undefined && y.number !== undefined) order = x.number - y.number;
        else if (x.number !== undefined) order = -1;
        else if (y.number !== undefined) order = 1;
        else order = x.text.localeCompare(y.text);
        return up ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
