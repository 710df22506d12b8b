/** Reading a QR code the way a phone's camera would: the PNG decoded, the code located and read. */
import jsQRModule from "jsqr";
import { PNG } from "pngjs";

// jsqr is a CommonJS bundle whose typings declare an ES default export: under Node's interop the
// module object is the function and also carries it as `.default`.
const jsQR = jsQRModule.default;

/** The text a base64 PNG's QR code carries; throws when the image holds no readable code. */
export function scanQrPng(base64: string): string {
  const image = PNG.sync.read(Buffer.from(base64, "base64"));
  const code = jsQR(new Uint8ClampedArray(image.data), image.width, image.height);
  if (code === null) throw new Error("no QR code found in the image");
  return code.data;
}
