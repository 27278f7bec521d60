// calld's web view: the player seeks to a quote, the transcript follows playback, a live call's page
// reloads when the call ends. Served as a file: the pages' Content-Security-Policy forbids inline script.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const player = document.getElementById("player");
  if (player) {
    const seek = (s) => {
      const go = () => { player.currentTime = s; player.play().catch(() => {}); };
      if (player.readyState >= 1) go(); else player.addEventListener("loadedmetadata", go, { once: true });
    };
    // A quote's or a turn's time is also a link into the recording (it plays there with no script);
    // here it plays in the page's own player, beside the transcript.
    document.querySelectorAll("button.seek[hidden]").forEach((b) => { b.hidden = false; });
    document.querySelectorAll("[data-seek]").forEach((el) => {
      if (el.dataset.seek === "") return;
      el.addEventListener("click", (ev) => { ev.preventDefault(); seek(parseFloat(el.dataset.seek)); });
    });
    const turns = Array.from(document.querySelectorAll("#transcript .turn"));
    let current = null;
    player.addEventListener("timeupdate", () => {
      const ms = player.currentTime * 1000;
      const now = turns.find((t) => t.dataset.start !== "" && +t.dataset.start <= ms && ms < +t.dataset.end) || null;
      if (now === current) return;
      if (current) current.classList.remove("now");
      current = now;
      if (now) { now.classList.add("now"); now.scrollIntoView({ block: "nearest" }); }
    });
  }
  document.querySelectorAll("[data-quote]").forEach((el) => {
    const n = el.dataset.quote;
    const all = () => document.querySelectorAll(`[data-quote="${n}"]`);
    el.addEventListener("mouseenter", () => all().forEach((o) => o.classList.add("lit")));
    el.addEventListener("mouseleave", () => all().forEach((o) => o.classList.remove("lit")));
  });
  const url = document.body.dataset.liveUrl;
  if (url) {
    const every = parseInt(document.body.dataset.pollMs, 10) || 1000;
    const poll = () => fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then((r) => r.json())
      .then((d) => {
        if (!d.live) { window.location.reload(); return; }
        document.getElementById("age").textContent = `${d.call.age_s} s`;
        Object.entries(d.call.tracks).forEach(([k, v]) => {
          const cell = document.querySelector(`[data-track="${k}"]`);
          if (cell) cell.textContent = v;
        });
        setTimeout(poll, every);
      })
      .catch(() => setTimeout(poll, every * 3));
    setTimeout(poll, every);
  }
});
