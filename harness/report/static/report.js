// window-harness conformance report: filters for the findings and the matrix.
// Plain DOM, no libraries; everything works without it, this only hides things.
(function () {
  "use strict";
  function filterFindings() {
    var text = document.getElementById("finding-filter").value.toLowerCase();
    var onlyNew = document.getElementById("only-unexplained").checked;
    var shown = 0;
    document.querySelectorAll("section.finding").forEach(function (section) {
      var hit = section.dataset.search.indexOf(text) >= 0;
      var keep = hit && (!onlyNew || section.classList.contains("unexplained"));
      section.classList.toggle("hidden", !keep);
      if (keep) { shown += 1; }
    });
    document.getElementById("finding-count").textContent = shown + " shown";
  }
  function init() {
    var filter = document.getElementById("finding-filter");
    if (filter) {
      filter.addEventListener("input", filterFindings);
      document.getElementById("only-unexplained").addEventListener("change", filterFindings);
      filterFindings();
    }
    var clean = document.getElementById("hide-clean");
    if (clean) {
      clean.addEventListener("change", function () {
        document.body.classList.toggle("hide-clean", clean.checked);
      });
    }
    // A differing cell links to its folded explanation: open it on the way.
    document.querySelectorAll("td a[href^='#x-']").forEach(function (link) {
      link.addEventListener("click", function () {
        var target = document.getElementById(link.getAttribute("href").slice(1));
        if (target) { target.open = true; }
      });
    });
    document.documentElement.dataset.ready = "1";
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
