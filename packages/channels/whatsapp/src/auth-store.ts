/**
 * The linked device's keys, kept under the plugin's state directory so a restart reconnects
 * without a new QR code: `<stateDir>/auth/<instance or _default>/creds.json` (the account's
 * identity and registration) and one file per Signal key (`<type>-<id>.json`), Baileys' own JSON
 * encoding of buffers. Unlike Baileys' example store, every file is written whole through a temp
 * file and a rename and is readable by the owner only (0600, in 0700 directories): a crash in the
 * middle of a write must not leave a half key that breaks every later session.
 *
 * Logging out (or WhatsApp unlinking the device) clears the folder: the keys are dead, and the
 * next pairing starts from fresh credentials.
 */
import { mkdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "@nexo/channels-common";
import type { AuthenticationCreds, AuthenticationState, SignalDataSet, SignalDataTypeMap } from "baileys";
import { baileys } from "./baileys.js";

export class AuthStore {
  readonly dir: string;

  constructor(stateDir: string, instance: string | null) {
    const name = instance ?? "_default";
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name)) throw new Error(`invalid instance name "${name}"`);
    this.dir = join(stateDir, "auth", name);
  }

  /** True when a device was linked (and not logged out) here. */
  linked(): boolean {
    const creds = this.read("creds.json") as AuthenticationCreds | undefined;
    // A QR-linked device keeps `registered: false` (that flag is for pairing codes): `me` is the link.
    // Asking for a pairing code sets `me` to the bare number before anything is linked; such
    // credentials count once the link's pair-success added the device identity (`account`).
    if (typeof creds?.me?.id !== "string") return false;
    return creds.pairingCode === undefined || creds.account !== undefined;
  }

  /** The linked account's JID, if any. */
  account(): string | undefined {
    return (this.read("creds.json") as AuthenticationCreds | undefined)?.me?.id;
  }

  /** The state Baileys reads and updates; `saveCreds` must run on every `creds.update`. */
  open(): { state: AuthenticationState; saveCreds: () => void } {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const creds = (this.read("creds.json") as AuthenticationCreds | undefined) ?? baileys().initAuthCreds();
    const state: AuthenticationState = {
      creds,
      keys: {
        get: <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const found: { [id: string]: SignalDataTypeMap[T] } = {};
          for (const id of ids) {
            let value = this.read(`${type}-${id}.json`);
            if (type === "app-state-sync-key" && value !== undefined)
              value = baileys().proto.Message.AppStateSyncKeyData.fromObject(value as object);
            if (value !== undefined) found[id] = value as SignalDataTypeMap[T];
          }
          return found;
        },
        set: (data: SignalDataSet) => {
          for (const [category, entries] of Object.entries(data)) {
            for (const [id, value] of Object.entries(entries ?? {})) {
              const file = `${category}-${id}.json`;
              if (value === null || value === undefined) this.remove(file);
              else this.write(file, value);
            }
          }
        },
      },
    };
    return { state, saveCreds: () => this.write("creds.json", state.creds) };
  }

  /** Forgets the device: every key and the credentials. */
  clear(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private path(file: string): string {
    // Key ids hold `/` and `:` (JIDs with devices); neither may reach the file system.
    return join(this.dir, file.replace(/\//g, "__").replace(/:/g, "-"));
  }

  private read(file: string): unknown {
    try {
      return JSON.parse(readFileSync(this.path(file), "utf8"), baileys().BufferJSON.reviver) as unknown;
    } catch {
      return undefined;
    }
  }

  private write(file: string, value: unknown): void {
    writeFileAtomic(this.path(file), JSON.stringify(value, baileys().BufferJSON.replacer));
  }

  private remove(file: string): void {
    try {
      unlinkSync(this.path(file));
    } catch {
      // Already gone.
    }
  }
}
