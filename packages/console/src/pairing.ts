/**
 * What a pairing challenge's state may show in the browser: the page's own fields only. The QR
 * code goes as the PNG (it is meant to be shown and scanned), a pairing code (linking by phone
 * number) as its text (it is meant to be typed on the phone); the terminal rendering and any
 * field a plugin adds beyond the documented ones stay in the console. `pairing/status` answers
 * pass through the same shape, so the page renders a pushed change and a read-back alike.
 */
import type { admin } from "@nexo/wire/schemas";

type PairingStatus = admin.PairingStatus;

export interface BrowserPairingStatus {
  challenge_id: string;
  state: PairingStatus["state"];
  channel?: string;
  instance?: string;
  qr_png_base64?: string;
  pairing_code?: string;
  device_jid?: string;
  error?: string;
}

export function pairingForBrowser(status: PairingStatus): BrowserPairingStatus {
  const data = status.data ?? {};
  const out: BrowserPairingStatus = { challenge_id: status.challenge_id, state: status.state };
  if (status.channel !== undefined) out.channel = status.channel;
  if (status.instance !== undefined) out.instance = status.instance;
  if (typeof data.qr_png_base64 === "string") out.qr_png_base64 = data.qr_png_base64;
  if (typeof data.pairing_code === "string") out.pairing_code = data.pairing_code;
  if (typeof data.device_jid === "string") out.device_jid = data.device_jid;
  if (typeof data.error === "string") out.error = data.error;
  return out;
}
