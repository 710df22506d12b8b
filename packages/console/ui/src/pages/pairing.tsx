/**
 * Link a device: start a pairing challenge for an agent on a channel whose plugin offers pairing
 * (WhatsApp's QR code), show each QR code as the daemon pushes it (a new one replaces the old),
 * follow the state to linked, expired or cancelled, and cancel it. The daemon refuses a channel
 * no plugin here can pair (`channel_unavailable`) and a phone number that is not E.164 (-32602);
 * the refusal shows beside the Start button.
 *
 * "Link with phone number" is for a console the phone cannot scan (another room, a remote
 * screen): the operator gives the account's number, and the page shows the pairing code the
 * person types on the phone, large, copyable, with the time it is good until.
 */
import { useEffect, useState } from "preact/hooks";
import { rpc } from "../api.js";
import { ActionButton, ErrorNote, time } from "../components.js";
import { notePairing, type PairingStatus, pairings, resyncs } from "../live.js";
import { AgentPicker, useAgentChoice } from "./agent-picker.js";

const ENDED: ReadonlySet<PairingStatus["state"]> = new Set(["linked", "expired", "cancelled"]);

interface Challenge {
  id: string;
  expiresAt: number;
  instructions?: string;
  /** Started with a phone number: a pairing code, not QR codes. */
  byNumber: boolean;
}

type LinkBy = "qr" | "phone";

function stateText(status: PairingStatus | undefined, byNumber: boolean): string {
  switch (status?.state ?? "pending") {
    case "pending":
      return "waiting for the channel to issue a code";
    case "qr_ready":
      return "scan the code with the phone";
    case "awaiting_user":
      return status?.pairing_code !== undefined
        ? "type the code on the phone"
        : `${byNumber ? "code taken" : "scanned"}: the phone is finishing the link`;
    case "linked":
      return "linked";
    case "expired":
      return byNumber ? "expired: the code was not used in time" : "expired: no scan in time";
    case "cancelled":
      return "cancelled";
  }
}

/** A number as people write it (+44 7700 900123, (0044) …) without the spacing the daemon refuses. */
function withoutSpacing(phone: string): string {
  return phone.replace(/[\s().-]/g, "");
}

/** WhatsApp shows its 8-character codes in two halves; the copy is the code itself. */
function shownCode(code: string): string {
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : code;
}

function PairingCode(props: { code: string; expiresAt: number }) {
  const [copied, setCopied] = useState<string | undefined>(undefined);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.code);
      setCopied("copied");
    } catch {
      // No clipboard here (permissions, an old browser): select it for Ctrl+C instead.
      const shown = document.querySelector("[data-testid=pairing-code]");
      if (shown !== null) document.getSelection()?.selectAllChildren(shown);
      setCopied("selected: press Ctrl+C");
    }
  };
  return (
    <div class="pairing-code">
      <p class="note">the code to type on the phone:</p>
      <output data-testid="pairing-code" aria-label="pairing code">
        {shownCode(props.code)}
      </output>
      <p class="buttons">
        <button type="button" onClick={() => void copy()} data-testid="pairing-code-copy">
          {copied === undefined ? "Copy" : `Copy (${copied})`}
        </button>
        <span class="note" data-testid="pairing-code-expiry">
          good until {time(props.expiresAt)} unless used
        </span>
      </p>
    </div>
  );
}

export function PairingPage() {
  const [agent, setAgent] = useAgentChoice();
  const [channel, setChannel] = useState("whatsapp");
  const [instance, setInstance] = useState("");
  const [linkBy, setLinkBy] = useState<LinkBy>("qr");
  const [phone, setPhone] = useState("");
  const [challenge, setChallenge] = useState<Challenge | undefined>(undefined);
  const [readError, setReadError] = useState<unknown>(undefined);
  const status = challenge === undefined ? undefined : pairings.value.get(challenge.id);
  const live = challenge !== undefined && (status === undefined || !ENDED.has(status.state));

  /** Reads the challenge's state back: after start (a push may have come first) and on reconnect. */
  const readBack = async (id: string, onlyIfUnknown: boolean) => {
    try {
      const current = (await rpc("pairing/status", { challenge_id: id })) as unknown as PairingStatus;
      if (!onlyIfUnknown || !pairings.value.has(id)) notePairing(current);
      setReadError(undefined);
    } catch (failure) {
      setReadError(failure);
    }
  };

  useEffect(() => {
    if (challenge !== undefined && live) void readBack(challenge.id, false);
  }, [resyncs.value]);

  const start = async () => {
    if (agent === undefined) throw new Error("choose an agent first");
    const trimmed = instance.trim();
    const byNumber = linkBy === "phone";
    if (byNumber && withoutSpacing(phone) === "") throw new Error("type the account's phone number first");
    const started = await rpc("pairing/start", {
      agent_id: agent,
      channel: channel.trim(),
      ...(trimmed === "" ? {} : { instance: trimmed }),
      ...(byNumber ? { phone_number: withoutSpacing(phone) } : {}),
    });
    setChallenge({
      id: started.challenge_id,
      expiresAt: started.expires_at_ms,
      byNumber,
      ...(started.instructions === undefined ? {} : { instructions: started.instructions }),
    });
    await readBack(started.challenge_id, true);
  };

  const cancel = async () => {
    if (challenge === undefined) return;
    await rpc("pairing/cancel", { challenge_id: challenge.id });
  };

  return (
    <section>
      <h1>Link a device</h1>
      <p class="note">
        Links a channel account to this daemon, e.g. a WhatsApp phone by its QR code: on the phone, WhatsApp →
        Settings → Linked devices → Link a device, then scan the code shown here. When the phone cannot see
        this screen, link with its phone number instead: the page then shows a code to type on the phone.
      </p>
      <div class="filters" data-testid="pairing-form">
        <AgentPicker value={agent} onChange={setAgent} />
        <label>
          channel{" "}
          <input
            name="channel"
            value={channel}
            onInput={(e) => setChannel((e.target as HTMLInputElement).value)}
          />
        </label>
        <label>
          instance{" "}
          <input
            name="instance"
            placeholder="(default)"
            value={instance}
            onInput={(e) => setInstance((e.target as HTMLInputElement).value)}
          />
        </label>
        <fieldset class="link-by">
          <legend>link with</legend>
          <label class="check">
            <input
              type="radio"
              name="link-by"
              value="qr"
              checked={linkBy === "qr"}
              onChange={() => setLinkBy("qr")}
            />{" "}
            QR code
          </label>
          <label class="check">
            <input
              type="radio"
              name="link-by"
              value="phone"
              checked={linkBy === "phone"}
              onChange={() => setLinkBy("phone")}
              data-testid="pairing-by-phone"
            />{" "}
            phone number
          </label>
        </fieldset>
        {linkBy === "phone" ? (
          <label>
            phone number{" "}
            <input
              name="phone"
              type="tel"
              autocomplete="off"
              placeholder="+44 7700 900123"
              value={phone}
              onInput={(e) => setPhone((e.target as HTMLInputElement).value)}
            />
          </label>
        ) : null}
        {/* Disabled until the agent list has loaded and one is chosen: a click before that could only fail. */}
        <ActionButton
          label="Start"
          kind="primary"
          action={start}
          disabled={live || agent === undefined}
          testId="pairing-start"
        />
      </div>
      {challenge === undefined ? null : (
        <div class="card pairing" data-testid="pairing" data-challenge={challenge.id}>
          <p>
            state:{" "}
            <strong class={`state ${status?.state ?? "pending"}`} data-testid="pairing-state">
              {status?.state ?? "pending"}
            </strong>{" "}
            — {stateText(status, challenge.byNumber)}
            {status?.device_jid === undefined ? null : (
              <>
                {" "}
                as <code data-testid="pairing-device">{status.device_jid}</code>
              </>
            )}
          </p>
          {status?.error === undefined ? null : <p class="note">{status.error}</p>}
          {status?.state === "qr_ready" && status.qr_png_base64 !== undefined ? (
            <img
              class="qr"
              data-testid="pairing-qr"
              alt="QR code to scan with the phone"
              src={`data:image/png;base64,${status.qr_png_base64}`}
            />
          ) : null}
          {status?.state === "awaiting_user" && status.pairing_code !== undefined ? (
            <PairingCode code={status.pairing_code} expiresAt={challenge.expiresAt} />
          ) : null}
          {challenge.instructions === undefined || !live ? null : (
            <p class="note">{challenge.instructions}</p>
          )}
          {live ? (
            <p class="buttons">
              <span class="note">the challenge ends at {time(challenge.expiresAt)} unless linked</span>
              <ActionButton label="Cancel" kind="danger" action={cancel} testId="pairing-cancel" />
            </p>
          ) : null}
          <ErrorNote error={readError} />
        </div>
      )}
    </section>
  );
}
