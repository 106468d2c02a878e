// The lab page while the live lab boots: a determinate progress bar for the
// runtime download (bytes on the wire, of the total), the status line saying
// what is happening, and the result panels marked pending while a change waits
// for an answer. A live move is marked only once its wait lasts (afterMs): the
// attribute restyles the panels (lab.css dims them), and setting and clearing it
// on every move put that restyle and repaint in the frame the answer waits
// behind. Once the boot settles (live, failed or unavailable) it hides the bar.
//
//   const progress = createProgress({ root, catalog, lang });
//   progress.update({ stage: "download" | "starting", loaded, total })
//   progress.pending(true | false, afterMs = 0)
//   progress.settled()
export function createProgress({ root, catalog, lang }) {
  const bar = document.getElementById("lab-progress");
  const status = document.getElementById("lab-status");
  const megabytes = new Intl.NumberFormat(lang, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const fill = (template, values) => template.replace(/\{(\w+)\}/g, (match, key) => (key in values ? values[key] : match));
  let line = null;
  let pendingTimer = null;

  const booting = () => root.dataset.labState === "precomputed";

  function mark(on) {
    clearTimeout(pendingTimer);
    pendingTimer = null;
    if (on === ("pending" in root.dataset)) return;
    if (on) root.dataset.pending = "";
    else delete root.dataset.pending;
    show();
  }

  function show() {
    if (!booting() || line === null) return;
    status.textContent = "pending" in root.dataset ? `${line} ${catalog.lab.status_pending}` : line;
  }

  return {
    update({ stage, loaded = 0, total = 0 }) {
      if (!booting() || !bar) return;
      if (stage === "download" && total > 0) {
        bar.max = total;
        bar.value = Math.min(loaded, total);
        bar.setAttribute("aria-valuetext", `${Math.round((100 * Math.min(loaded, total)) / total)}%`);
        line = fill(catalog.lab.status_downloading, { loaded: megabytes.format(loaded / 1e6), total: megabytes.format(total / 1e6) });
      } else if (stage === "starting") {
        bar.max = 1;
        bar.value = 1;
        bar.removeAttribute("aria-valuetext");
        line = catalog.lab.status_starting;
      }
      root.dataset.bootProgress = bar.max ? String(bar.value / bar.max) : "0";
      show();
    },
    pending(on, afterMs = 0) {
      if (on && afterMs > 0 && !("pending" in root.dataset)) {
        if (pendingTimer === null) pendingTimer = setTimeout(() => mark(true), afterMs);
      } else mark(on);
    },
    settled() {
      if (bar) bar.hidden = true;
    },
  };
}
