/**
 * Who may talk to the agent through a channel (inbound), and to whom the channel may send
 * (outbound). One rule each, checked in one place per direction:
 *
 *   Allowlist       a list of ids or handles from the operator's config: `*` for everyone, empty
 *                   for nobody (a channel must be opened on purpose). Handles compare without
 *                   case and without a leading `@`.
 *   OutboundPolicy  `*` (anyone), `known` (the contacts that wrote to us and passed the inbound
 *                   allowlist, remembered across restarts in a file), or a list of ids.
 */
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "./files.js";

/** A config value that cannot be used; names the variable. */
export class ChannelConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable} ${problem}`);
    this.name = "ChannelConfigError";
  }
}

const normalise = (entry: string): string => entry.trim().replace(/^@/, "").toLowerCase();

export class Allowlist {
  private constructor(
    readonly everyone: boolean,
    private readonly entries: ReadonlySet<string>,
  ) {}

  /** `raw` is a comma- or space-separated list; `*` alone means everyone. */
  static parse(raw: string | undefined): Allowlist {
    const parts = (raw ?? "")
      .split(/[\s,]+/)
      .map(normalise)
      .filter((part) => part !== "");
    if (parts.includes("*")) return new Allowlist(true, new Set());
    return new Allowlist(false, new Set(parts));
  }

  get size(): number {
    return this.entries.size;
  }

  /** True when any of the sender's identities (id, handle) is listed. */
  allows(...identities: ReadonlyArray<string | number | undefined>): boolean {
    if (this.everyone) return true;
    return identities.some((id) => id !== undefined && this.entries.has(normalise(String(id))));
  }
}

/** Contacts that wrote to us, persisted as a JSON array so `known` survives a restart. */
export class KnownContacts {
  private readonly ids = new Set<string>();

  constructor(private readonly file: string | undefined) {
    if (file === undefined) return;
    try {
      const saved = JSON.parse(readFileSync(file, "utf8")) as unknown;
      if (Array.isArray(saved)) for (const id of saved) if (typeof id === "string") this.ids.add(id);
    } catch {
      // No file yet (or an unreadable one): nobody is known; the next add rewrites it.
    }
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.file !== undefined) writeFileAtomic(this.file, `${JSON.stringify([...this.ids])}\n`);
  }
}

export class OutboundPolicy {
  private constructor(
    private readonly mode: "everyone" | "known" | "listed",
    private readonly listed: Allowlist,
    private readonly known: KnownContacts,
  ) {}

  static parse(raw: string | undefined, known: KnownContacts): OutboundPolicy {
    const value = (raw ?? "").trim();
    if (value === "" || value === "known") return new OutboundPolicy("known", Allowlist.parse(""), known);
    const listed = Allowlist.parse(value);
    return new OutboundPolicy(listed.everyone ? "everyone" : "listed", listed, known);
  }

  /** Why `to` may not be sent to, or undefined when it may. */
  refusal(to: string): string | undefined {
    if (this.mode === "everyone") return undefined;
    if (this.mode === "known") {
      return this.known.has(to)
        ? undefined
        : "has never written to this channel (outbound is limited to known contacts)";
    }
    return this.listed.allows(to) ? undefined : "is not in the outbound allowlist";
  }
}
