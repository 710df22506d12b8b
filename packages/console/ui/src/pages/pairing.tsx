/**
 * Link a device: start a pairing challenge for an agent on a channel whose plugin offers pairing
 * (WhatsApp's QR code), show each QR code as the daemon pushes it (a new one replaces the old),
 * follow the state to linked, expired or cancelled, and cancel it. The daemon refuses a channel
 * no plugin here can pair (`channel_unavailable`); that refusal shows beside the Start button.
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
}

const STATE_TEXT: Record<PairingStatus["state"], string> = {
  pending: "waiting for the channel to issue a code",
  qr_ready: "scan the code with the phone",
  awaiting_user: "scanned: the phone is finishing the link",
  linked: "linked",
  expired: "expired: no scan in time",
  cancelled: "cancelled",
};

export function PairingPage() {
  const [agent, setAgent] = useAgentChoice();
  const [channel, setChannel] = useState("whatsapp");
  const [instance, setInstance] = useState("");
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
    const started = await rpc("pairing/start", {
      agent_id: agent,
      channel: channel.trim(),
      ...(trimmed === "" ? {} : { instance: trimmed }),
    });
    setChallenge({
      id: started.challenge_id,
      expiresAt: started.expires_at_ms,
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
        Settings → Linked devices → Link a device, then scan the code shown here.
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
        <ActionButton label="Start" kind="primary" action={start} disabled={live} testId="pairing-start" />
      </div>
      {challenge === undefined ? null : (
        <div class="card pairing" data-testid="pairing" data-challenge={challenge.id}>
          <p>
            state:{" "}
            <strong class={`state ${status?.state ?? "pending"}`} data-testid="pairing-state">
              {status?.state ?? "pending"}
            </strong>{" "}
            — {STATE_TEXT[status?.state ?? "pending"]}
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
