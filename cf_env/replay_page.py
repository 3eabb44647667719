"""The HTML replay viewer's page: one file, inline CSS, JS and SVG, nothing fetched.

:func:`cf_env.replay.write_html` puts the replay's frames (:func:`cf_env.replay.frames`) where
``__DATA__`` stands. The page shows the table at one step: the centre double, its arms, every
double's foot of three toes (the geometry of :mod:`cf_env.scene`), real pip patterns, free ends
(yellow), empty slots (dashed) and forced slots (red); whose turn it is and the move just made;
every hand, or one seat's view only; the boneyard; each round's points and the totals; the
winners at the end.

Keys: ``→``/``←`` next/previous step, ``↓``/``↑`` (or PageDown/PageUp) next/previous round,
space play/pause, Home/End first/last step. The address holds ``#step=N`` (the position after the
record's first N actions): the page opens there and keeps it in step. With ``"live": true`` in its
data (``chickenfoot play --web``) it asks its local server for the game (``GET state``) and sends
your moves (``POST move``), showing your legal moves as buttons (pointing at or focusing one
outlines its slot on the table, a ``.target``); the same keys review the game so far. Centre arms
carry their numbers (``.armlabel``, from 1, as the moves say). Each tile on the table is a
``<g class="tile" data-placed="a-b">`` (``a`` the end that touches its neighbour, ``b`` the free
end), so tests can count and read them.
"""

from __future__ import annotations

__all__ = ["PAGE"]

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
  :root { --felt: #22703c; --ink: #191919; --ivory: #faf8f0; --open: #ffe278; --forced: #eb3c32; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 14px/1.4 system-ui, sans-serif; background: #16361f; color: #eee; }
  header { padding: 8px 14px; background: #0f2616; display: flex; gap: 18px; align-items: baseline; flex-wrap: wrap; }
  header h1 { font-size: 17px; margin: 0; }
  .seat { display: inline-flex; align-items: center; gap: 5px; margin-right: 10px; }
  .swatch { width: 12px; height: 12px; border-radius: 3px; display: inline-block; }
  main { display: flex; gap: 12px; padding: 10px; align-items: flex-start; }
  #table { flex: 1 1 auto; min-width: 0; background: var(--felt); border-radius: 10px; }
  #board { width: 100%; height: calc(100vh - 90px); min-height: 420px; display: block; }
  aside { flex: 0 0 360px; display: flex; flex-direction: column; gap: 8px; }
  .panel { background: #0f2616; border-radius: 8px; padding: 8px 10px; }
  #move { min-height: 2.8em; color: #ffe9b0; }
  #turn { font-weight: 600; }
  #pending { color: #ff9a90; }
  #moves button.move { margin: 3px 3px 0 0; background: #7a5a12; border-color: #c99a2e; }
  #moves .error { color: #ff9a90; }
  #controls { display: flex; gap: 4px; flex-wrap: wrap; }
  button { font: inherit; background: #2c5a3a; color: #fff; border: 1px solid #4d8a5e; border-radius: 5px;
           padding: 4px 9px; cursor: pointer; }
  button:hover { background: #3c7450; }
  select { font: inherit; }
  .hand { margin: 3px 0; }
  .hand .who { display: flex; align-items: center; gap: 6px; }
  .hand.current .who { color: #ffe278; font-weight: 600; }
  .hand svg { max-width: 100%; height: auto; }
  table { border-collapse: collapse; width: 100%; }
  th, td { padding: 2px 5px; text-align: right; border-bottom: 1px solid #24452e; }
  th:first-child, td:first-child { text-align: left; }
  td.low { color: #ffe278; font-weight: 600; }
  #winners { font-size: 16px; font-weight: 700; color: #ffe278; }
  .legend span { margin-right: 12px; }
  .keys { color: #9fbfa8; font-size: 12px; }
  .tile rect.body { fill: var(--ivory); stroke: #3c3c3c; stroke-width: 0.05; }
  .tile rect.free { fill: var(--open); }
  .tile line { stroke: #3c3c3c; stroke-width: 0.05; }
  .tile circle.pip { fill: var(--ink); }
  .tile text { fill: var(--ink); font-size: 0.55px; text-anchor: middle; dominant-baseline: central; }
  .ghost rect { fill: none; stroke: #c8e1c8; stroke-width: 0.04; stroke-dasharray: 0.12 0.1; }
  .ghost.forced rect { stroke: var(--forced); stroke-width: 0.08; stroke-dasharray: none; }
  .back rect { fill: #35506a; stroke: #1c2c3a; stroke-width: 0.05; }
  .armlabel { fill: #d8ecd8; font-size: 0.5px; font-weight: 700; text-anchor: middle; dominant-baseline: central; }
  .target rect { fill: rgba(255, 226, 120, 0.35); stroke: #ffe278; stroke-width: 0.1; }
</style>
</head>
<body>
<header>
  <h1>__TITLE__</h1>
  <div id="seats"></div>
</header>
<main>
  <section id="table"><svg id="board" xmlns="http://www.w3.org/2000/svg" preserveAspectRatio="xMidYMid meet"></svg></section>
  <aside>
    <div class="panel">
      <div id="status"></div>
      <div id="turn"></div>
      <div id="move"></div>
      <div id="pending"></div>
      <div id="winners"></div>
    </div>
    <div class="panel" id="live" hidden><div id="moves"></div></div>
    <div class="panel" id="controls">
      <button id="first" title="first step (Home)">first</button>
      <button id="prevRound" title="previous round (&#x2191; or PageUp)">&#xAB; round</button>
      <button id="prev" title="previous step (&#x2190;)">&#x25C0; step</button>
      <button id="play" title="play / pause (space)">&#x25B6; play</button>
      <button id="next" title="next step (&#x2192;)">step &#x25B6;</button>
      <button id="nextRound" title="next round (&#x2193; or PageDown)">round &#xBB;</button>
      <button id="last" title="last step (End)">last</button>
    </div>
    <div class="panel">
      <label>Hands shown: <select id="view"></select></label>
      <div id="hands"></div>
      <div id="boneyard"></div>
    </div>
    <div class="panel"><table id="scores"></table></div>
    <div class="panel legend keys">
      <span><span class="swatch" style="background:#ffe278"></span> free end</span>
      <span><span class="swatch" style="border:2px solid #eb3c32"></span> forced slot</span>
      <span><span class="swatch" style="border:1px dashed #c8e1c8"></span> empty slot</span><br>
      Keys: &#x2190; &#x2192; step, &#x2191; &#x2193; round, space play/pause, Home/End. The address keeps
      <code>#step=N</code>.
    </div>
  </aside>
</main>
<script type="application/json" id="cf-data">__DATA__</script>
<script>
"use strict";
let D = JSON.parse(document.getElementById("cf-data").textContent);
let F, R, P, NP, LAST, roundStarts;
function setData(data) {
  D = data;
  F = data.frames; R = data.rounds; P = data.players; NP = P.length; LAST = F.length - 1;
  roundStarts = [];
  F.forEach((f, i) => { if (roundStarts[f.r] === undefined) roundStarts[f.r] = i; });
}
const SVG = "http://www.w3.org/2000/svg";
const COLOURS = ["#d64541", "#3478c6", "#e6a01e", "#8c50b4", "#28a096", "#c85a96", "#787878", "#5a963c"];
const GRID = {0: [], 1: [[1, 1]], 2: [[0, 0], [2, 2]], 3: [[0, 0], [1, 1], [2, 2]],
  4: [[0, 0], [0, 2], [2, 0], [2, 2]], 5: [[0, 0], [0, 2], [1, 1], [2, 0], [2, 2]],
  6: [[0, 0], [0, 2], [1, 0], [1, 2], [2, 0], [2, 2]], 7: [[0, 0], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [2, 2]],
  8: [[0, 0], [0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1], [2, 2]],
  9: [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2]]};
let step = 0, timer = null, view = "all";

function el(tag, attrs, parent) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}
function name(p) { return P[p] === "player_" + p ? P[p] : "player_" + p + " (" + P[p] + ")"; }

function half(g, value, cx) {
  if (GRID[value] !== undefined) {
    for (const [row, col] of GRID[value])
      el("circle", {class: "pip", cx: cx + (col - 1) * 0.27, cy: (row - 1) * 0.27, r: 0.085}, g);
  } else {
    el("text", {x: cx, y: 0}, g).textContent = value;
  }
}

// A domino centred at (x, y), its long side along `angle` degrees, `a` on the left half.
function domino(parent, a, b, x, y, angle, opts) {
  const g = el("g", {class: "tile", transform: `translate(${x} ${y}) rotate(${angle})`}, parent);
  el("rect", {class: "body", x: -1, y: -0.5, width: 2, height: 1, rx: 0.12}, g);
  if (opts && opts.free) {
    if (a === b) el("rect", {class: "free", x: -0.95, y: -0.45, width: 1.9, height: 0.9, rx: 0.1}, g);
    else el("rect", {class: "free", x: 0.04, y: -0.45, width: 0.91, height: 0.9, rx: 0.1}, g);
  }
  el("line", {x1: 0, y1: -0.42, x2: 0, y2: 0.42}, g);
  half(g, a, -0.5);
  half(g, b, 0.5);
  if (opts && opts.player !== undefined)
    el("circle", {cx: 0, cy: 0, r: 0.07, fill: COLOURS[opts.player % COLOURS.length]}, g);
  return g;
}

function drawBoard(f) {
  const board = document.getElementById("board");
  board.replaceChildren();
  const round = R[f.r], b = f.view || round.bounds, m = 0.6;  // the view fits the table, stepwise
  board.setAttribute("viewBox", `${b[0] - m} ${b[1] - m} ${b[2] - b[0] + 2 * m} ${b[3] - b[1] + 2 * m}`);
  for (const [x, y, angle, forced] of f.ghosts) {
    const g = el("g", {class: forced ? "ghost forced" : "ghost", transform: `translate(${x} ${y}) rotate(${angle})`}, board);
    el("rect", {x: -0.96, y: -0.46, width: 1.92, height: 0.92, rx: 0.12}, g);
  }
  (round.arms || []).forEach(([x, y], k) => {  // arms are numbered from 1, as the moves say
    const label = el("text", {class: "armlabel", x: x, y: y, "data-arm": k + 1}, board);
    label.textContent = k + 1;
  });
  const free = new Set(f.open);
  for (let i = 0; i < f.n; i++) {
    const [a, b2, x, y, angle, player] = round.tiles[i];
    const g = domino(board, a, b2, x, y, angle, {free: free.has(i), player: player});
    g.setAttribute("data-placed", `${a}-${b2}`);
    g.setAttribute("data-node", i);
    g.appendChild(el("title", {})).textContent = `${a}-${b2}, played by ${name(player)}`;
  }
}

function handSvg(tiles, hidden, unit) {  // unit: pixels per half-tile (your own hand in live play: larger)
  const width = Math.max(tiles.length, 1) * 2.2;
  const svg = el("svg", {viewBox: `-0.1 -0.6 ${width} 1.2`, width: width * unit, height: 1.2 * unit});
  tiles.forEach((t, k) => {
    if (hidden || t[0] < 0) {  // a hidden tile: [-1, -1] from a live game's server
      const g = el("g", {class: "back", transform: `translate(${k * 2.2 + 1} 0)`}, svg);
      el("rect", {x: -1, y: -0.5, width: 2, height: 1, rx: 0.12}, g);
    } else {
      domino(svg, t[0], t[1], k * 2.2 + 1, 0, 0, {});
    }
  });
  return svg;
}

function drawHands(f) {
  const box = document.getElementById("hands");
  box.replaceChildren();
  f.hands.forEach((hand, p) => {
    const row = document.createElement("div");
    row.className = "hand" + (p === f.cur ? " current" : "");
    row.dataset.seat = p;
    const who = document.createElement("div");
    who.className = "who";
    who.innerHTML = `<span class="swatch" style="background:${COLOURS[p % COLOURS.length]}"></span>`;
    who.appendChild(document.createTextNode(`${name(p)}: ${hand.length} tile${hand.length === 1 ? "" : "s"}`
      + (p === f.cur ? "  (to move)" : "")));
    row.appendChild(who);
    const hidden = !(view === "all" || Number(view) === p);
    row.appendChild(handSvg(hand, hidden, D.live && p === D.seat ? 40 : 22));
    box.appendChild(row);
  });
  document.getElementById("boneyard").textContent = `Boneyard: ${f.bone} tile${f.bone === 1 ? "" : "s"}`;
}

function drawScores(f) {
  const table = document.getElementById("scores");
  let rows = "<tr><th>round</th>" + P.map((_, p) => `<th>p${p}</th>`).join("") + "</tr>";
  f.scores.forEach((scores, k) => {
    rows += `<tr><td>${k + 1}</td>` + scores.map(s => `<td>${s}</td>`).join("") + "</tr>";
  });
  const low = Math.min(...f.totals);
  rows += "<tr><th>total</th>" + f.totals.map((t, p) =>
    `<td class="${(f.over ? f.win.includes(p) : t === low) ? "low" : ""}">${t}</td>`).join("") + "</tr>";
  table.innerHTML = rows;
}

function render() {
  const f = F[step];
  drawBoard(f);
  drawHands(f);
  drawScores(f);
  const rounds = D.config.rounds || R.length;
  document.getElementById("status").textContent =
    `Round ${f.r + 1}/${rounds}  ·  step ${step}/${LAST}`;
  document.getElementById("turn").textContent = f.over ? "Game over" : `${name(f.cur)} to move`
    + (f.drawn ? ` (just drew ${f.drawn[0]}-${f.drawn[1]}: play it or keep it)` : "");
  document.getElementById("move").textContent = f.text;
  document.getElementById("pending").textContent = f.pend ? "Forced: " + f.pend : "";
  document.getElementById("winners").textContent = f.over
    ? "Winner" + (f.win.length > 1 ? "s" : "") + ": " + f.win.map(name).join(", ") : "";
  document.body.dataset.step = step;
  document.body.dataset.round = f.r;
}

function show(s) {
  step = Math.max(0, Math.min(LAST, Math.floor(Number(s)) || 0));
  render();
  const want = "#step=" + step;
  if (location.hash !== want) history.replaceState(null, "", want);
}
function stepFromHash() {
  const m = /step=(\d+)/.exec(location.hash);
  return m ? Number(m[1]) : 0;
}
function prevRound() {
  const r = F[step].r;
  show(step > roundStarts[r] ? roundStarts[r] : (r > 0 ? roundStarts[r - 1] : 0));
}
function nextRound() {
  const r = F[step].r;
  show(r + 1 < roundStarts.length ? roundStarts[r + 1] : LAST);
}
function togglePlay() {
  const button = document.getElementById("play");
  if (timer) {
    clearInterval(timer);
    timer = null;
    button.textContent = "\u25B6 play";
    return;
  }
  if (step >= LAST) show(0);
  timer = setInterval(() => { if (step >= LAST) togglePlay(); else show(step + 1); }, 700);
  button.textContent = "\u2016 pause";
}

function init() {
  const select = document.getElementById("view");
  select.add(new Option("every seat", "all"));
  P.forEach((_, p) => select.add(new Option(name(p) + "'s view", String(p))));
  if (D.seat !== undefined) { view = String(D.seat); select.value = view; }
  select.addEventListener("change", () => { view = select.value; render(); });
  document.getElementById("seats").innerHTML = P.map((_, p) =>
    `<span class="seat"><span class="swatch" style="background:${COLOURS[p % COLOURS.length]}"></span>${name(p)}</span>`).join("");
  document.getElementById("first").onclick = () => show(0);
  document.getElementById("last").onclick = () => show(LAST);
  document.getElementById("prev").onclick = () => show(step - 1);
  document.getElementById("next").onclick = () => show(step + 1);
  document.getElementById("prevRound").onclick = prevRound;
  document.getElementById("nextRound").onclick = nextRound;
  document.getElementById("play").onclick = togglePlay;
  document.addEventListener("keydown", (e) => {
    if (e.target.tagName === "SELECT" || (e.target.tagName === "BUTTON" && e.key === " ")) return;
    const keys = {ArrowRight: () => show(step + 1), ArrowLeft: () => show(step - 1), ArrowDown: nextRound,
      PageDown: nextRound, ArrowUp: prevRound, PageUp: prevRound, " ": togglePlay, Home: () => show(0),
      End: () => show(LAST)};
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  window.addEventListener("hashchange", () => { const s = stepFromHash(); if (s !== step) show(s); });
}

// Live play (chickenfoot play --web): the local server sends the game so far and your legal moves.
function drawMoves(data) {
  const box = document.getElementById("moves");
  box.replaceChildren();
  if (data.error) {
    const p = document.createElement("div");
    p.className = "error";
    p.textContent = data.error;
    box.appendChild(p);
  }
  if (data.legal && data.legal.length) {
    const head = document.createElement("div");
    head.textContent = "Your move:";
    box.appendChild(head);
    for (const move of data.legal) {
      const button = document.createElement("button");
      button.className = "move";
      button.dataset.action = move.action;
      button.textContent = move.text;
      button.onclick = () => send(move.action);
      if (move.slot) {  // pointing at or focusing a move shows where it would go
        button.onmouseenter = button.onfocus = () => target(move.slot);
        button.onmouseleave = button.onblur = () => target(null);
      }
      box.appendChild(button);
    }
  } else if (F.length && F[LAST].over) {
    box.innerHTML = 'Game over. <a href="record" download="chickenfoot-game.json">Download the record</a> ' +
      "(chickenfoot replay FILE).";
  }
}
function target(slot) {
  const board = document.getElementById("board");
  for (const old of board.querySelectorAll(".target")) old.remove();
  if (!slot) return;
  const [x, y, angle] = slot;
  const g = el("g", {class: "target", transform: `translate(${x} ${y}) rotate(${angle})`}, board);
  el("rect", {x: -1.05, y: -0.55, width: 2.1, height: 1.1, rx: 0.14}, g);
}
function receive(data) {
  setData(data);
  drawMoves(data);
  show(LAST);
}
function send(action) {
  fetch("move", {method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify({action})})
    .then(r => r.json()).then(receive);
}

if (D.live) {
  document.getElementById("live").hidden = false;
  document.getElementById("view").closest("label").hidden = true;  // the server shows your hand only
  fetch("state").then(r => r.json()).then(data => { setData(data); init(); receive(data); });
} else {
  setData(D);
  init();
  show(stepFromHash());
}
</script>
</body>
</html>
"""
