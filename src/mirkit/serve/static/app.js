// The page of `mirkit serve`. Every value from the index or the query reaches the page through
// textContent or a text node, never through innerHTML. Snippets arrive as the store's escaped
// HTML whose only markup is <b>...</b>: they are split at those marks (the only '<' such a
// string can hold) and the five escapes the store writes are decoded to text by hand, so no
// string from the server is ever parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { q: "", offset: 0, k: 10, filters: {} };
const ENTITIES = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "\"", "&#x27;": "'" };

function unescapeText(s) {
  return s.replace(/&(amp|lt|gt|quot|#x27);/g, (m) => ENTITIES[m]);
}

// A snippet as nodes: text, and <mark> for the words between <b> and </b>.
function snippetNodes(escaped) {
  const out = document.createElement("p");
  out.className = "snippet";
  let marked = false;
  for (const part of escaped.split(/(<b>|<\/b>)/)) {
    if (part === "<b>") { marked = true; continue; }
    if (part === "</b>") { marked = false; continue; }
    if (!part) continue;
    const text = document.createTextNode(unescapeText(part));
    if (marked) {
      const m = document.createElement("mark");
      m.appendChild(text);
      out.appendChild(m);
    } else {
      out.appendChild(text);
    }
  }
  return out;
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  if (cls) e.className = cls;
  return e;
}

async function getJSON(url, options) {
  const response = await fetch(url, options);
  let body;
  try { body = await response.json(); } catch (e) { body = { error: response.statusText }; }
  if (!response.ok) throw new Error(body.error || ("HTTP " + response.status));
  return body;
}

function filterString() {
  const parts = [];
  for (const [field, value] of Object.entries(state.filters)) {
    if (value !== "") parts.push(field + ":" + JSON.stringify(value));
  }
  return parts.join(" AND ");
}

async function search() {
  const status = $("status");
  const list = $("results");
  if (!state.q) { list.replaceChildren(); status.textContent = ""; return; }
  const params = new URLSearchParams({ q: state.q, k: state.k, offset: state.offset });
  const filter = filterString();
  if (filter) params.set("filter", filter);
  if (state.offset === 0) params.set("facets", "true");  // counts for the selectors
  status.className = "status";
  status.textContent = "Searching…";
  const started = performance.now();
  try {
    const r = await getJSON("/search?" + params.toString());
    const total = performance.now() - started;
    list.replaceChildren();
    list.start = state.offset + 1;
    for (const hit of r.hits) {
      const li = el("li");
      li.className = "hit";
      const head = el("div");
      head.appendChild(el("span", hit.title || hit.id, "title"));
      head.appendChild(el("span", "id " + hit.id + " · score " + hit.score.toFixed(3), "meta"));
      li.appendChild(head);
      for (const s of hit.snippets || []) li.appendChild(snippetNodes(s));
      list.appendChild(li);
    }
    status.textContent = (r.hits.length ? "Results " + (state.offset + 1) + "–" +
      (state.offset + r.hits.length) : "No results") + " · search " + r.took_ms.toFixed(2) +
      " ms, round trip " + total.toFixed(1) + " ms";
    if (r.facets) showFacets(r.facets);
    $("prev").disabled = state.offset === 0;
    $("next").disabled = r.hits.length < state.k;
    $("page").textContent = "page " + (Math.floor(state.offset / state.k) + 1);
  } catch (e) {
    list.replaceChildren();
    status.className = "status error";
    status.textContent = e.message;
  }
}

// Each keyword value's count among the best results, beside it in its selector.
function showFacets(facets) {
  for (const select of document.querySelectorAll("#filters select")) {
    const counts = facets[select.dataset.field] || {};
    for (const option of select.options) {
      if (option.value === "") continue;
      option.textContent = option.value + " (" + (counts[option.value] || 0) + ")";
    }
  }
}

async function loadStats() {
  try {
    const s = await getJSON("/stats");
    if (s.index) {
      $("info").textContent = s.index.n_docs + " documents · commit " +
        (s.index.generation === null ? "-" : s.index.generation);
      const box = $("filters");
      box.replaceChildren();
      for (const [field, values] of Object.entries(s.index.keyword_fields)) {
        const label = el("label", field + " ");
        const select = document.createElement("select");
        select.dataset.field = field;
        select.appendChild(el("option", "any"));
        select.options[0].value = "";
        for (const v of values) {
          const o = el("option", v);
          o.value = v;
          select.appendChild(o);
        }
        select.addEventListener("change", () => {
          state.filters[field] = select.value;
          state.offset = 0;
          search();
        });
        label.appendChild(select);
        box.appendChild(label);
      }
    } else {
      $("tab-text").hidden = true;
      showTab("images");
    }
    if (!s.images) $("tab-images").hidden = true;
  } catch (e) {
    $("info").textContent = e.message;
  }
}

function showTab(which) {
  $("text-pane").hidden = which !== "text";
  $("image-pane").hidden = which !== "images";
  $("tab-text").classList.toggle("active", which === "text");
  $("tab-images").classList.toggle("active", which === "images");
}

// -- images ---------------------------------------------------------------------------------
let queryImage = null;
let imageResult = null;

function loadImage(url) {
  return new Promise((resolve, reject) => {
    const img = new Image();
    img.onload = () => resolve(img);
    img.onerror = () => reject(new Error("cannot load " + url));
    img.src = url;
  });
}

// The query on the left, the result on the right (its picture, or a grey frame holding its
// matched keypoints when the server has no picture), a line per verified match.
async function drawMatches(hit) {
  const canvas = $("matches");
  const ctx = canvas.getContext("2d");
  let other = null;
  if (hit.image) {
    try { other = await loadImage(hit.image); } catch (e) { other = null; }
  }
  const m = hit.matches || [];
  const ow = other ? other.naturalWidth : Math.max(64, ...m.map((r) => r[2] + 16));
  const oh = other ? other.naturalHeight : Math.max(64, ...m.map((r) => r[3] + 16));
  const qw = queryImage.naturalWidth, qh = queryImage.naturalHeight;
  const height = 400;
  const sq = height / qh, so = height / oh;
  canvas.width = Math.round(qw * sq + ow * so + 10);
  canvas.height = height;
  ctx.fillStyle = "#fff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.drawImage(queryImage, 0, 0, qw * sq, height);
  const x0 = qw * sq + 10;
  if (other) {
    ctx.drawImage(other, x0, 0, ow * so, height);
  } else {
    ctx.fillStyle = "#ddd";
    ctx.fillRect(x0, 0, ow * so, height);
  }
  ctx.lineWidth = 1;
  m.forEach((r, i) => {
    ctx.strokeStyle = "hsl(" + ((i * 47) % 360) + ", 90%, 45%)";
    ctx.beginPath();
    ctx.moveTo(r[0] * sq, r[1] * sq);
    ctx.lineTo(x0 + r[2] * so, r[3] * so);
    ctx.stroke();
    ctx.beginPath();
    ctx.arc(r[0] * sq, r[1] * sq, 2.5, 0, 2 * Math.PI);
    ctx.arc(x0 + r[2] * so, r[3] * so, 2.5, 0, 2 * Math.PI);
    ctx.stroke();
  });
  canvas.dataset.drawn = String(m.length);
  canvas.dataset.id = hit.id;
}

async function imageSearch() {
  const file = $("image-file").files[0];
  const status = $("image-status");
  if (!file) { status.textContent = "Choose a picture first."; return; }
  status.className = "status";
  status.textContent = "Searching…";
  const form = new FormData();
  form.append("image", file);
  try {
    const url = URL.createObjectURL(file);
    queryImage = await loadImage(url);
    const r = await getJSON("/images/search?k=5", { method: "POST", body: form });
    imageResult = r;
    const list = $("image-results");
    list.replaceChildren();
    r.hits.forEach((hit, i) => {
      const li = el("li", hit.id + " · " + (hit.inliers === undefined ? "" :
        hit.inliers + " verified matches · ") + "score " + hit.score.toFixed(3));
      li.className = "image-hit";
      li.addEventListener("click", () => {
        for (const x of list.children) x.classList.remove("selected");
        li.classList.add("selected");
        drawMatches(hit);
      });
      if (i === 0) li.classList.add("selected");
      list.appendChild(li);
    });
    status.textContent = r.hits.length + " images · " + r.took_ms.toFixed(0) + " ms";
    if (r.hits.length) await drawMatches(r.hits[0]);
  } catch (e) {
    status.className = "status error";
    status.textContent = e.message;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.q = $("q").value.trim();
    state.k = parseInt($("k").value, 10);
    state.offset = 0;
    search();
  });
  $("prev").addEventListener("click", () => {
    state.offset = Math.max(0, state.offset - state.k);
    search();
  });
  $("next").addEventListener("click", () => { state.offset += state.k; search(); });
  $("tab-text").addEventListener("click", () => showTab("text"));
  $("tab-images").addEventListener("click", () => showTab("images"));
  $("image-form").addEventListener("submit", (e) => { e.preventDefault(); imageSearch(); });
  loadStats();
});
