// Loaded (as a classic script, before Material's bundle) by the lab page only.
// Material requests its search index (and its search worker then loads its
// language files) as soon as a page opens; on the lab page that competes with
// the live lab's runtime download. Hold that one request until the lab has
// settled (live, failed or unavailable), or until the reader opens the
// search. Search keeps working, offline too: the request is only delayed.
(function () {
  "use strict";
  const lab = document.getElementById("lab-app");
  if (!lab) return;
  const open = XMLHttpRequest.prototype.open;
  const send = XMLHttpRequest.prototype.send;
  const waiting = [];
  let released = false;

  function release() {
    if (released) return;
    released = true;
    waiting.splice(0).forEach((go) => go());
  }

  if (lab.dataset.labState !== "precomputed") release();
  new MutationObserver(() => {
    if (lab.dataset.labState !== "precomputed") release();
  }).observe(lab, { attributes: true, attributeFilter: ["data-lab-state"] });
  document.addEventListener("focusin", (event) => {
    if (event.target instanceof Element && event.target.matches("[data-md-component=search-query]")) release();
  });

  XMLHttpRequest.prototype.open = function (method, url) {
    this.labSearchIndex = /\/search\/search_index\.json(\?|$)/.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function (...args) {
    if (!this.labSearchIndex || released) return send.apply(this, args);
    waiting.push(() => send.apply(this, args));
  };
})();
