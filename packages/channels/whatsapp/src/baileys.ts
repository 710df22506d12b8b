/**
 * Baileys, loaded once, on the channel's first start. Importing it takes one to several seconds
 * (over a thousand modules, protobuf definitions included), which the plugin's handshake with the
 * daemon (`initialize`, `plugin check`) must not wait for: the plugin answers at once and pays the
 * cost when `channel.start` is about to connect anyway.
 *
 * `loadBaileys()` is awaited before anything that uses Baileys' values (the key store's encoding,
 * message normalisation, disconnect reasons) is made; `baileys()` then hands the module out
 * synchronously, and throws if someone reached for it earlier.
 */
type Baileys = typeof import("baileys");

let loaded: Baileys | undefined;
let loading: Promise<Baileys> | undefined;

export function loadBaileys(): Promise<Baileys> {
  loading ??= import("baileys").then((module) => {
    loaded = module;
    return module;
  });
  return loading;
}

export function baileys(): Baileys {
  if (loaded === undefined) throw new Error("Baileys is used before loadBaileys() finished");
  return loaded;
}
