"use strict";
// Pointing at a chunk lights all of its parts in its panel and shows its
// hover text (header path, size, source) in the panel's info box.
(function () {
  var lit = [];
  document.addEventListener("mouseover", function (ev) {
    var mark = ev.target.closest ? ev.target.closest("mark.chunk") : null;
    if (!mark) {
      return;
    }
    var panel = mark.closest(".panel");
    lit.forEach(function (el) { el.classList.remove("lit"); });
    lit = Array.prototype.slice.call(panel.querySelectorAll('mark.chunk[data-chunk="' + mark.dataset.chunk + '"]'));
    lit.forEach(function (el) { el.classList.add("lit"); });
    panel.querySelector(".info").textContent = mark.title;
  });
})();
