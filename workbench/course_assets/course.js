// Embed every chart of the page: a Vega-Lite spec in a <script type="application/json"> inside .wb-course-chart,
// drawn by the vega-embed of assets/vega.js (vendored: nothing is loaded from the internet).
document.querySelectorAll(".wb-course-chart").forEach(function (holder) {
  var spec = JSON.parse(holder.querySelector("script").textContent);
  var target = document.createElement("div");
  holder.appendChild(target);
  vegaEmbed(target, spec, { mode: "vega-lite", actions: false }).then(
    function () { holder.classList.add("wb-course-drawn"); },
    function (error) { target.textContent = "This chart could not be drawn: " + error; }
  );
});
