/**
 * A pairing QR code as the admin RPC hands it to the operator: as text for a terminal (two rows
 * of modules per line, so it stays square in a monospace font) and as a PNG, base64.
 */
import QRCode from "qrcode";

export interface RenderedQr {
  qr_ascii: string;
  qr_png_base64: string;
}

export async function renderQr(code: string): Promise<RenderedQr> {
  const [ascii, png] = await Promise.all([
    QRCode.toString(code, { type: "utf8", errorCorrectionLevel: "L", margin: 2 }),
    QRCode.toBuffer(code, { type: "png", errorCorrectionLevel: "L", margin: 2, scale: 6 }),
  ]);
  return { qr_ascii: ascii, qr_png_base64: png.toString("base64") };
}
