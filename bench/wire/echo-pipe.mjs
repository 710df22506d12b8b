// The pipe floor: bytes back as they come, no framing, no JSON. What any JSON-RPC over these pipes
// pays at one call in flight (two process wake-ups a round trip), whatever its own work.
process.stdin.on("data", (chunk) => process.stdout.write(chunk));
