// The report's only script (no library, nothing fetched): the index's tag filter and the
// drop-downs that switch between figures. Every page reads fully without it.
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
  filter.addEventListener("change", apply);
  apply();
})();

// Switches: a drop-down shows one figure of its group (by data-key) at a time.
document.querySelectorAll("select.switch").forEach(function (select) {
  var group = document.getElementById(select.getAttribute("data-group"));
  if (!group) return;
  function apply() {
    group.querySelectorAll("[data-key]").forEach(function (item) {
      item.hidden = item.getAttribute("data-key") !== select.value;
    });
  }
  select.addEventListener("change", apply);
  apply();
});
