// The console's only script: live rows, a live conversation, and the two actions.
// HTML it inserts was rendered and escaped by the server, from the same templates as the page.
"use strict";

function fragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  return template.content.firstElementChild;
}

function liveState(text) {
  const state = document.getElementById("live-state");
  if (state) state.textContent = text;
}

function followExecutions(url) {
  const rows = document.getElementById("rows");
  const source = new EventSource(url);
  source.addEventListener("row", (message) => {
    const data = JSON.parse(message.data);
    const fresh = fragment(data.html);
    const old = document.getElementById("row-" + data.key);
    if (old) old.replaceWith(fresh);
    else rows.prepend(fresh);
    const empty = document.getElementById("empty");
    if (empty) empty.remove();
  });
  source.addEventListener("remove", (message) => {
    const old = document.getElementById("row-" + JSON.parse(message.data).key);
    if (old) old.remove();
  });
  source.addEventListener("reset", (message) => {
    const body = document.createElement("tbody");
    body.innerHTML = JSON.parse(message.data).html;
    rows.replaceChildren(...body.children);
  });
  source.addEventListener("failed", (message) => {
    liveState("Not live: " + JSON.parse(message.data).message);
    source.close();
  });
  source.addEventListener("open", () => liveState("Live"));
  source.addEventListener("error", () => liveState("Reconnecting…"));
}

function followConversation(box) {
  const source = new EventSource(box.dataset.stream);
  source.addEventListener("entry", (message) => {
    const data = JSON.parse(message.data);
    const fresh = fragment(data.html);
    const old = document.getElementById("entry-" + data.index);
    if (old) {
      const open = old.querySelector("details[open]") !== null;
      old.replaceWith(fresh);
      const details = fresh.querySelector("details");
      if (open && details) details.open = true;
    } else {
      box.append(fresh);
    }
  });
  source.addEventListener("failed", (message) => {
    liveState("The log could not be followed: " + JSON.parse(message.data).message);
    source.close();
  });
  source.addEventListener("ended", () => {
    liveState("The agent's log ended. Reload for the stored transcript once the phase has recorded it.");
    source.close();
  });
}

function wireActions() {
  for (const button of document.querySelectorAll("button[data-action]")) {
    button.addEventListener("click", async () => {
      if (!window.confirm(button.dataset.confirm)) return;
      const result = button.parentElement.querySelector(".action-result");
      const answer = await fetch(button.dataset.action, {
        method: "POST",
        headers: { "X-Agentjobs-Action": "1" },
        credentials: "same-origin",
      });
      result.textContent = answer.ok ? "Sent: the operator stops the run." : "Refused (" + answer.status + ").";
    });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("live-state");
  if (live && live.dataset.stream && document.getElementById("rows")) followExecutions(live.dataset.stream);
  const box = document.getElementById("conversation");
  if (box && box.dataset.stream) followConversation(box);
  wireActions();
});
