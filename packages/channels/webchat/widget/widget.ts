/**
 * The web chat widget: what `<script src="http://HOST:PORT/widget.js" async></script>` puts on a
 * page. A launcher button and a chat panel in a shadow root (the page's styles cannot reach in,
 * ours cannot leak out), talking to the plugin over one WebSocket at the script's own address.
 *
 * The visitor's token (issued by the plugin at the first visit) is kept in localStorage, so a
 * reload, a second tab or a restart of the plugin continues the same conversation; the plugin
 * sends the conversation so far with every welcome. Replies arrive in pieces while the agent
 * writes them (`delta`), then whole (`reply`), which replaces the pieces. Each message the visitor
 * sends shows its delivery status: sending, delivered (nexo has it), or why it was not sent. The
 * connection comes back by itself, with a growing pause, when it drops.
 *
 * Options, as data- attributes of the script tag: data-title (the heading; the plugin's
 * WEBCHAT_TITLE otherwise), data-position (right | left), data-open (true: open at load).
 *
 * Written without a framework and compiled by the repository's build to dist/widget/widget.js; a
 * script, not a module, so that one plain script tag is all a page needs.
 */
(() => {
  interface ShownFile {
    name: string;
    url: string;
    kind: string;
    mime_type?: string;
  }
  interface Entry {
    id: string;
    from: "visitor" | "agent";
    text: string;
    files?: ShownFile[];
  }
  type Frame =
    | {
        type: "welcome";
        token: string;
        visitor: string;
        title: string;
        history: Entry[];
        limits: { max_text_chars: number; media_max_bytes: number };
      }
    | { type: "status"; id: string; status: string; reason?: string; retry_after_ms?: number }
    | { type: "delta"; stream: string; text: string }
    | { type: "reply"; entry: Entry }
    | { type: "error"; reason: string };

  const script = document.currentScript as HTMLScriptElement | null;
  if (script === null || (window as unknown as Record<string, unknown>).__nexoWebchat) return;
  (window as unknown as Record<string, unknown>).__nexoWebchat = true;
  const base = new URL(".", script.src);
  const storageKey = `nexo-webchat:${base.href}`;
  const wsUrl = new URL("ws", base);
  wsUrl.protocol = base.protocol === "https:" ? "wss:" : "ws:";

  const host = document.createElement("div");
  host.id = "nexo-webchat";
  const root = host.attachShadow({ mode: "open" });
  const side = script.dataset.position === "left" ? "left" : "right";
  root.innerHTML = `
<style>
  :host { all: initial; }
  * { box-sizing: border-box; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
  .launcher { position: fixed; bottom: 20px; ${side}: 20px; width: 56px; height: 56px; border-radius: 50%;
    border: none; background: #2f5bea; color: #fff; font-size: 26px; cursor: pointer;
    box-shadow: 0 4px 14px rgba(0,0,0,.25); z-index: 2147483000; }
  .panel { position: fixed; bottom: 88px; ${side}: 20px; width: 360px; max-width: calc(100vw - 40px);
    height: 520px; max-height: calc(100vh - 110px); display: none; flex-direction: column; background: #fff;
    border-radius: 12px; box-shadow: 0 8px 30px rgba(0,0,0,.25); overflow: hidden; z-index: 2147483000; }
  .panel.open { display: flex; }
  header { background: #2f5bea; color: #fff; padding: 12px 14px; display: flex; align-items: center; gap: 8px; }
  header h2 { font-size: 15px; margin: 0; flex: 1; font-weight: 600; }
  header button { background: none; border: none; color: #fff; font-size: 18px; cursor: pointer; }
  .state { font-size: 12px; padding: 4px 14px; background: #fff6d5; color: #6b5400; display: none; }
  .state.shown { display: block; }
  .log { flex: 1; overflow-y: auto; padding: 12px; display: flex; flex-direction: column; gap: 8px; background: #f6f7fb; }
  .msg { max-width: 85%; padding: 8px 11px; border-radius: 12px; font-size: 14px; line-height: 1.35;
    white-space: pre-wrap; overflow-wrap: anywhere; }
  .visitor { align-self: flex-end; background: #2f5bea; color: #fff; border-bottom-right-radius: 4px; }
  .agent { align-self: flex-start; background: #fff; color: #1d1d1f; border: 1px solid #e3e5ee; border-bottom-left-radius: 4px; }
  .agent.streaming { opacity: .85; }
  .status { display: block; font-size: 11px; opacity: .8; margin-top: 3px; text-align: right; }
  .failed .status { color: #ffd2d2; font-weight: 600; }
  .msg a { color: inherit; }
  .msg img { display: block; max-width: 100%; margin-top: 6px; border-radius: 6px; }
  form { display: flex; gap: 6px; padding: 8px; border-top: 1px solid #e3e5ee; align-items: flex-end; }
  textarea { flex: 1; resize: none; border: 1px solid #cfd3e0; border-radius: 8px; padding: 7px 9px; font-size: 14px; height: 38px; }
  form button, label.attach { border: none; border-radius: 8px; background: #2f5bea; color: #fff; padding: 0 12px;
    height: 38px; cursor: pointer; font-size: 14px; display: flex; align-items: center; }
  label.attach { background: #e9ecf7; color: #2f5bea; }
  form button:disabled { background: #9aa9da; cursor: default; }
  input[type=file] { display: none; }
  .files { font-size: 12px; padding: 0 10px 6px; color: #555; }
</style>
<button class="launcher" part="launcher" aria-label="Open the chat" data-testid="launcher">💬</button>
<section class="panel" role="dialog" aria-label="Chat" data-testid="panel">
  <header><h2 data-testid="title"></h2><button class="close" aria-label="Close the chat">✕</button></header>
  <div class="state" data-testid="state" role="status"></div>
  <div class="log" data-testid="log" aria-live="polite"></div>
  <div class="files" data-testid="chosen"></div>
  <form data-testid="form">
    <label class="attach" title="Attach a file">📎<input type="file" multiple data-testid="file"></label>
    <textarea rows="1" placeholder="Write a message…" aria-label="Message" data-testid="input"></textarea>
    <button type="submit" data-testid="send" disabled>Send</button>
  </form>
</section>`;
  const $ = <T extends Element>(selector: string) => root.querySelector(selector) as T;
  const panel = $<HTMLElement>(".panel");
  const log = $<HTMLElement>(".log");
  const state = $<HTMLElement>(".state");
  const input = $<HTMLTextAreaElement>("textarea");
  const send = $<HTMLButtonElement>("form button");
  const fileInput = $<HTMLInputElement>("input[type=file]");
  const chosen = $<HTMLElement>(".files");
  $<HTMLElement>("h2").textContent = script.dataset.title ?? "Chat";

  const toggle = (open: boolean) => {
    panel.classList.toggle("open", open);
    if (open) input.focus();
  };
  $<HTMLButtonElement>(".launcher").addEventListener("click", () =>
    toggle(!panel.classList.contains("open")),
  );
  $<HTMLButtonElement>(".close").addEventListener("click", () => toggle(false));
  if (script.dataset.open === "true") toggle(true);

  let socket: WebSocket | undefined;
  let ready = false;
  let limits = { max_text_chars: 4000, media_max_bytes: 0 };
  let retryMs = 500;
  const streams = new Map<string, HTMLElement>();

  const showState = (text: string) => {
    state.textContent = text;
    state.classList.toggle("shown", text !== "");
  };
  const scroll = () => {
    log.scrollTop = log.scrollHeight;
  };

  function safeUrl(raw: string): string | undefined {
    try {
      const url = new URL(raw, base);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
    } catch {
      return undefined;
    }
  }

  function bubble(entry: Entry): HTMLElement {
    const el = document.createElement("div");
    el.className = `msg ${entry.from}`;
    el.dataset.id = entry.id;
    el.dataset.from = entry.from;
    const text = document.createElement("span");
    text.className = "text";
    text.textContent = entry.text;
    el.append(text);
    for (const file of entry.files ?? []) {
      const url = file.url === "" ? undefined : safeUrl(file.url);
      if (url === undefined) {
        el.append(document.createElement("br"), `📎 ${file.name}`);
        continue;
      }
      const link = document.createElement("a");
      link.href = url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      link.textContent = `📎 ${file.name}`;
      el.append(document.createElement("br"), link);
      if (file.kind === "image") {
        const img = document.createElement("img");
        img.src = url;
        img.alt = file.name;
        el.append(img);
      }
    }
    return el;
  }

  function setStatus(el: Element | null, text: string, failed = false): void {
    if (el === null) return;
    let status = el.querySelector(".status");
    if (status === null) {
      status = document.createElement("span");
      status.className = "status";
      el.append(status);
    }
    status.textContent = text;
    el.classList.toggle("failed", failed);
    (el as HTMLElement).dataset.status = failed ? "failed" : text;
  }

  function addEntry(entry: Entry): void {
    if (log.querySelector(`[data-id="${CSS.escape(entry.id)}"]`) !== null) return;
    log.append(bubble(entry));
    scroll();
  }

  function onFrame(frame: Frame): void {
    switch (frame.type) {
      case "welcome": {
        localStorage.setItem(storageKey, frame.token);
        ready = true;
        retryMs = 500;
        limits = frame.limits;
        if (script!.dataset.title === undefined) $<HTMLElement>("h2").textContent = frame.title;
        // The history is the truth after a reconnect: what was pending before is in it or was lost.
        for (const el of [...log.children]) if ((el as HTMLElement).dataset.status !== "sending") el.remove();
        for (const stream of streams.values()) stream.remove();
        streams.clear();
        const pending = [...log.children];
        for (const el of pending) el.remove();
        for (const entry of frame.history) {
          addEntry(entry);
          if (entry.from === "visitor") setStatus(log.lastElementChild, "delivered");
        }
        for (const el of pending) {
          log.append(el);
          setStatus(el, "not sent: the connection dropped", true);
        }
        scroll();
        showState("");
        send.disabled = false;
        host.dataset.visitor = frame.visitor;
        host.dataset.ready = "true";
        break;
      }
      case "status": {
        const el = log.querySelector(`[data-id="${CSS.escape(frame.id)}"]`);
        if (frame.status === "received") setStatus(el, "delivered");
        else if (frame.status === "rate_limited")
          setStatus(
            el,
            `not sent: too many messages, try again in ${Math.ceil((frame.retry_after_ms ?? 1000) / 1000)} s`,
            true,
          );
        else setStatus(el, `not sent: ${frame.reason ?? frame.status}`, true);
        break;
      }
      case "delta": {
        let el = streams.get(frame.stream);
        if (el === undefined) {
          el = bubble({ id: `stream-${frame.stream}`, from: "agent", text: "" });
          el.classList.add("streaming");
          streams.set(frame.stream, el);
          log.append(el);
        }
        el.querySelector(".text")!.textContent += frame.text;
        scroll();
        break;
      }
      case "reply": {
        for (const stream of streams.values()) stream.remove();
        streams.clear();
        addEntry(frame.entry);
        break;
      }
      case "error":
        showState(frame.reason);
        break;
    }
  }

  function connect(): void {
    showState(ready ? "Reconnecting…" : "Connecting…");
    ready = false;
    host.dataset.ready = "false";
    send.disabled = true;
    const ws = new WebSocket(wsUrl);
    socket = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      ws.send(JSON.stringify({ type: "hello", token: localStorage.getItem(storageKey) ?? undefined }));
    };
    ws.onmessage = (event) => {
      try {
        onFrame(JSON.parse(String(event.data)) as Frame);
      } catch {
        // A frame this version does not understand: ignored.
      }
    };
    ws.onclose = () => {
      if (socket !== ws) return;
      ready = false;
      host.dataset.ready = "false";
      send.disabled = true;
      showState(
        opened ? "Connection lost. Reconnecting…" : "The chat cannot be reached from this page right now.",
      );
      setTimeout(connect, retryMs);
      retryMs = Math.min(retryMs * 2, 10_000);
    };
  }

  function readFile(file: File): Promise<{ name: string; mime_type: string; data_base64: string }> {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => {
        const url = String(reader.result);
        resolve({ name: file.name, mime_type: file.type, data_base64: url.slice(url.indexOf(",") + 1) });
      };
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  fileInput.addEventListener("change", () => {
    chosen.textContent = [...(fileInput.files ?? [])].map((f) => `📎 ${f.name}`).join("  ");
  });

  $<HTMLFormElement>("form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = input.value.trim();
    const files = [...(fileInput.files ?? [])];
    if ((text === "" && files.length === 0) || !ready || socket === undefined) return;
    const id = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;
    const el = bubble({
      id,
      from: "visitor",
      text,
      files: files.map((f) => ({ name: f.name, url: "", kind: "document" })),
    });
    log.append(el);
    scroll();
    input.value = "";
    fileInput.value = "";
    chosen.textContent = "";
    if (text.length > limits.max_text_chars)
      return setStatus(el, `not sent: longer than ${limits.max_text_chars} characters`, true);
    const tooBig = files.find((f) => f.size > limits.media_max_bytes);
    if (tooBig !== undefined)
      return setStatus(
        el,
        limits.media_max_bytes === 0
          ? "not sent: this chat takes no files"
          : `not sent: ${tooBig.name} is too large`,
        true,
      );
    setStatus(el, "sending");
    const payload = await Promise.all(files.map(readFile));
    socket.send(JSON.stringify({ type: "message", id, text, files: payload }));
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $<HTMLFormElement>("form").requestSubmit();
    }
  });

  document.body.append(host);
  connect();
})();
