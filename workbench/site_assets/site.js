// Probe Workbench site: embeds the charts, lists a clicked heat-map cell's questions, zooms the taxonomy atlas,
// shows a concept's cluster.
// Data files are scripts (data/NAME.js calls WB.loaded(NAME, value)): pages opened from file:// may not fetch().
"use strict";
const WB = (() => {
  const page = JSON.parse(document.getElementById("wb-page").textContent);
  const loaded = {}, waiting = {}, views = {};

  function load(name) {
    if (name in loaded) return Promise.resolve(loaded[name]);
    return new Promise((resolve, reject) => {
      if (!waiting[name]) {
        waiting[name] = [];
        const script = document.createElement("script");
        script.src = "data/" + name + ".js";
        script.onerror = () => reject(new Error("cannot read " + script.src));
        document.head.appendChild(script);
      }
      waiting[name].push(resolve);
    });
  }

  function element(tag, text, attributes) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    Object.entries(attributes || {}).forEach(([key, value]) => node.setAttribute(key, value));
    return node;
  }

  function conceptLink(concept) {
    return element("a", concept, { href: "#concept=" + encodeURIComponent(concept), class: "wb-concept-link" });
  }

  // The question table: the first questions, or those of the cells clicked in the heat map.
  const SHOWN = 200;
  let rows = [], shown = 0;

  function showQuestions(caption, list) {
    rows = list; shown = 0;
    document.getElementById("wb-questions-caption").textContent = caption;
    const head = document.querySelector("#wb-questions thead");
    head.replaceChildren(element("tr"));
    const names = [page.several_models ? "model" : null, "probe, hops", "distractors", "concept", "question",
      "gold", "pick", "right"].filter(Boolean);
    names.forEach((name) => head.firstChild.appendChild(element("th", name)));
    document.querySelector("#wb-questions tbody").replaceChildren();
    more();
  }

  function more() {
    const body = document.querySelector("#wb-questions tbody");
    rows.slice(shown, shown + SHOWN).forEach(([label, row, column, concept, question, gold, pick, correct]) => {
      const tr = element("tr", null, { class: correct ? "wb-right" : "wb-wrong" });
      if (page.several_models) tr.appendChild(element("td", label));
      [row, column].forEach((text) => tr.appendChild(element("td", text)));
      tr.appendChild(element("td")).appendChild(conceptLink(concept));
      [question, gold, pick, correct ? "✓" : "✗"].forEach((text) => tr.appendChild(element("td", text)));
      body.appendChild(tr);
    });
    shown = Math.min(rows.length, shown + SHOWN);
    const button = document.getElementById("wb-more");
    button.hidden = shown >= rows.length;
    button.textContent = "show " + Math.min(SHOWN, rows.length - shown) + " more of " + (rows.length - shown);
  }

  function showFirst() {
    showQuestions("The " + page.first.length + " question rows most models got wrong (click a heat-map cell)",
      page.first);
  }

  async function showCells(view) {
    const picked = view.data("cell_store").map((tuple) => tuple.values);  // [label, row, column] per clicked cell
    if (!picked.length) return showFirst();
    const cells = picked.map(([label, row, column]) =>
      page.cells.find((cell) => cell[0] === label && cell[1] === row && cell[2] === column)).filter(Boolean);
    const parts = await Promise.all(cells.map((cell) => load("cells/" + cell[4])));
    const list = [];
    cells.forEach((cell, i) => parts[i].forEach((values) => list.push([cell[0], cell[1], cell[2], ...values])));
    const names = cells.map((cell) => (page.several_models ? cell[0] + ": " : "") + cell[1] + " × " + cell[2]);
    showQuestions(list.length + " questions in " + names.join(", "), list);
  }

  // Concepts: the index (one row per concept: name, block, questions, [right, n] per model), then its block.
  async function findConcepts(query) {
    const index = await load("concepts");
    const text = query.trim().toLowerCase();
    const wrong = (entry) => entry[3].reduce((sum, model) => sum + (model ? model[1] - model[0] : 0), 0);
    const found = text
      ? index.filter((entry) => entry[0].toLowerCase().includes(text))
          .sort((a, b) => b[0].toLowerCase().startsWith(text) - a[0].toLowerCase().startsWith(text))
      : index.slice().sort((a, b) => wrong(b) - wrong(a));
    const list = document.getElementById("wb-concept-list");
    list.replaceChildren(...found.slice(0, 20).map((entry) => {
      const item = element("li");
      item.appendChild(conceptLink(entry[0]));
      item.appendChild(document.createTextNode(" " + entry[3].map((model) => (model ? model[0] + "/" + model[1]
        : "–")).join(" · ")));
      return item;
    }));
    if (!found.length) list.replaceChildren(element("li", "no concept matches " + JSON.stringify(query)));
  }

  async function showConcept(concept) {
    const index = await load("concepts");
    const entry = index.find((item) => item[0] === concept);
    const box = document.getElementById("wb-concept");
    if (!entry) return box.replaceChildren(element("p", "no questions about " + concept + " in these predictions"));
    const questions = (await load("concepts/" + entry[1]))[concept];
    const verdicts = entry[3].map((model, i) => model && page.labels[i] + ": " + model[0] + " of " + model[1] +
      " right" + (model[0] === model[1] ? " (cluster right)" : " (cluster wrong)")).filter(Boolean);
    box.replaceChildren(element("h3", concept, { class: "wb-concept-name" }),
      element("p", questions.length + " questions. " + verdicts.join("; ")));
    questions.forEach(([row, column, question, choices, answer, picks]) => {
      const part = element("div", null, { class: "wb-question" });
      part.appendChild(element("p", question, { class: "wb-question-text" }));
      part.appendChild(element("p", row + " · distractors " + column, { class: "wb-cell" }));
      const table = element("table", null, { class: "wb-choices" });
      const head = table.appendChild(element("tr"));
      ["choice", ...page.labels.filter((_, i) => picks[i])].forEach((name) => head.appendChild(element("th", name)));
      choices.forEach((choice, c) => {
        const tr = table.appendChild(element("tr", null, c === answer ? { class: "wb-gold" } : {}));
        tr.appendChild(element("td", (c === answer ? "★ " : "") + choice));
        picks.filter(Boolean).forEach(([pred, correct, scores]) => {
          const score = scores[c] === null ? "–" : Number(scores[c]).toPrecision(4);
          const cls = c === pred ? (correct ? "wb-pick wb-right" : "wb-pick wb-wrong") : "";
          tr.appendChild(element("td", (c === pred ? "▶ " : "") + score, cls ? { class: cls } : {}));
        });
      });
      part.appendChild(table);
      box.appendChild(part);
    });
    box.scrollIntoView();
  }

  // The taxonomy atlas: page.atlas.rows hold every node's rectangle in the whole tree, per model. Zooming into a
  // node draws its subtree re-scaled to the full width (a child's width is its share of its parent's).
  const atlas = page.atlas;
  let atlasRoot = atlas ? atlas.nodes[0] : null;
  const atlasRows = {}, atlasChildren = {};  // label + "|" + node -> row; label + "|" + parent -> child rows
  if (atlas) atlas.rows.forEach((values) => {
    const row = Object.fromEntries(atlas.columns.map((name, i) => [name, values[i]]));
    atlasRows[row.label + "|" + row.node] = row;
    (atlasChildren[row.label + "|" + row.parent] ||= []).push(row);
  });

  function atlasSpec(root) {
    const shown = [];
    Object.values(atlasRows).filter((row) => row.node === root).forEach((top) => {
      const scale = 1 / (top.x1 - top.x0);
      const stack = [top];
      while (stack.length) {
        const row = stack.pop(), level = row.level - top.level;
        const x0 = (row.x0 - top.x0) * scale, x1 = (row.x1 - top.x0) * scale;
        const name = row.node.replace(/\.[a-z]\.\d+$/, "").replaceAll("_", " ");
        shown.push({ ...row, x0, x1, level, y0: level, y1: level + 1, xm: (x0 + x1) / 2, ym: level + 0.5,
          text: x1 - x0 >= atlas.label_width ? name : "" });
        if (level + 1 < atlas.levels) stack.push(...(atlasChildren[row.label + "|" + row.node] || []));
      }
    });
    const spec = structuredClone(page.charts["wb-atlas"]);
    spec.datasets[Object.keys(spec.datasets)[0]] = shown;
    (spec.spec || spec).height = atlas.level_height * Math.max(...shown.map((row) => row.y1));
    return spec;
  }

  function atlasParent(node) {
    const row = Object.values(atlasRows).find((item) => item.node === node);
    return row ? row.parent : null;
  }

  async function zoomAtlas(node) {
    if (node !== atlasRoot) {
      atlasRoot = node;
      views["wb-atlas"].finalize();
      const result = await vegaEmbed("#wb-atlas", atlasSpec(node), options);
      views["wb-atlas"] = result.view;
      listenAtlas(result.view);
    }
    const trail = [node];
    while (atlasParent(trail[0])) trail.unshift(atlasParent(trail[0]));
    document.getElementById("wb-atlas-path").textContent = trail.join(" › ");
    document.getElementById("wb-atlas-up").disabled = document.getElementById("wb-atlas-top").disabled =
      trail.length < 2;
    const below = await load("atlas/" + atlas.nodes.indexOf(node));
    document.getElementById("wb-atlas-caption").textContent = below.length + " concepts below " + node +
      ", the worst known first" + (below.length > SHOWN ? " (the first " + SHOWN + ")" : "") +
      "; clusters right of those scored" + (page.several_models ? ", all models together" : "") + ":";
    document.getElementById("wb-atlas-concepts").replaceChildren(...below.slice(0, SHOWN).map(
      ([concept, clusters, right]) => {
        const item = element("li");
        item.appendChild(conceptLink(concept));
        item.appendChild(document.createTextNode(" " + right + "/" + clusters));
        return item;
      }));
  }

  function listenAtlas(view) {
    view.addSignalListener("node", () => {
      const picked = view.data("node_store");
      if (picked.length) zoomAtlas(picked[0].values[0]).catch(console.error);
    });
  }

  function route() {
    const match = location.hash.match(/^#concept=(.+)$/);
    if (match) showConcept(decodeURIComponent(match[1])).catch(console.error);
  }

  const options = { mode: "vega-lite", actions: false, renderer: "svg" };
  if (atlas) page.charts["wb-atlas"] = atlasSpec(atlasRoot);
  const embedded = Object.entries(page.charts).map(([id, spec]) =>
    vegaEmbed("#" + id, spec, options).then((result) => { views[id] = result.view; return result.view; }));
  if (page.cells) {
    showFirst();
    document.getElementById("wb-more").addEventListener("click", more);
    embedded[Object.keys(page.charts).indexOf("wb-heatmap")].then((view) =>
      view.addSignalListener("cell", () => showCells(view).catch(console.error)));
  }
  if (atlas) {
    embedded[Object.keys(page.charts).indexOf("wb-atlas")].then(listenAtlas);
    document.getElementById("wb-atlas-up").addEventListener("click", () =>
      zoomAtlas(atlasParent(atlasRoot)).catch(console.error));
    document.getElementById("wb-atlas-top").addEventListener("click", () =>
      zoomAtlas(atlas.nodes[0]).catch(console.error));
  }
  const search = document.getElementById("wb-concept-search");
  if (search) {
    search.addEventListener("input", () => findConcepts(search.value).catch(console.error));
    findConcepts("").catch(console.error);
  }
  window.addEventListener("hashchange", route);
  route();
  return { loaded: (name, value) => { loaded[name] = value; (waiting[name] || []).forEach((f) => f(value)); },
    load, page, views, ready: Promise.all(embedded) };
})();
